#!/bin/bash
# after s3.sh: the gated quoted arm + opening 0.5 with --rehearsal-scale signal (anchors weigh as much as the step's signal): concise seed 2 (drifted 20→9 with fixed anchors, held 19 without), then seed 1 of signoff, tldr, french
while pgrep -f "s3.sh" >/dev/null; do sleep 20; done
run() { BIN=$1; P=$2; S=$3; NAME=$4; shift 4
OUT=/work/runs/s32/$NAME
mkdir -p $OUT
nice -n 5 $BIN bench learn --model qwen2.5-coder-1.5b --personas $P --versions 6 --first-seed $S \
  --arms "combine-t15:combine:--teacher-url={teacher}:--teacher-model=clawrl:--teacher-select-relevance:--teacher-select-length=fit:--teacher-select-quoted" --teacher-serve qwen2.5-coder-1.5b \
  --serve-arg=--teacher-samples=4 --serve-arg=--lr=5e-4 --serve-arg=--gate-backtrack=2 --version-timeout 20m --keep-data "$@" --out $OUT > $OUT/run.log 2>&1
}
A="--serve-arg=--teacher-select-opening=0.5 --serve-arg=--rehearsal-scale=signal"
run /work/runs/bin-s32a concise 2 concise-15-relfitqgo-rs-s2 $A
run /work/runs/bin-s32a signoff 1 signoff-15-relfitqgo-rs-s1 $A
run /work/runs/bin-s32a tldr 1 tldr-15-relfitqgo-rs-s1 $A
run /work/runs/bin-s32a french 1 french-15-relfitqgo-rs-s1 $A
