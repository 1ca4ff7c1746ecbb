#!/bin/bash
# after s1.sh: signoff seed 1 with --baseline batch (an all-liked step trains nothing but the scaled anchors), then tldr seed 2 signal and fixed
while pgrep -f "s1.sh" >/dev/null; do sleep 20; done
run() { BIN=$1; P=$2; S=$3; NAME=$4; shift 4
OUT=/work/runs/s33/$NAME
mkdir -p $OUT
nice -n 5 $BIN bench learn --model qwen2.5-coder-1.5b --personas $P --versions 6 --first-seed $S \
  --arms "combine-t15:combine:--teacher-url={teacher}:--teacher-model=clawrl:--teacher-select-relevance:--teacher-select-length=fit:--teacher-select-quoted" --teacher-serve qwen2.5-coder-1.5b \
  --serve-arg=--teacher-samples=4 --serve-arg=--lr=5e-4 --serve-arg=--gate-backtrack=2 --version-timeout 20m --keep-data "$@" --out $OUT > $OUT/run.log 2>&1
}
A="--serve-arg=--teacher-select-opening=0.5"
run /work/runs/bin-s32a signoff 1 signoff-15-relfitqgo-rs-batch-s1 $A --serve-arg=--rehearsal-scale=signal --serve-arg=--baseline=batch
run /work/runs/bin-s32a tldr 2 tldr-15-relfitqgo-rs-s2 $A --serve-arg=--rehearsal-scale=signal
run /work/runs/bin-s32a tldr 2 tldr-15-relfitqgo-s2 $A
