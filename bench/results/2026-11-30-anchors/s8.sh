#!/bin/bash
# concise seed 4, fixed then signal anchor scale: does the seed-2 gain repeat?
while pgrep -f "s7.sh" >/dev/null; do sleep 10; done
run() { BIN=$1; P=$2; S=$3; NAME=$4; shift 4
OUT=/work/runs/s32/$NAME
mkdir -p $OUT
nice -n 5 $BIN bench learn --model qwen2.5-coder-1.5b --personas $P --versions 6 --first-seed $S \
  --arms "combine-t15:combine:--teacher-url={teacher}:--teacher-model=clawrl:--teacher-select-relevance:--teacher-select-length=fit:--teacher-select-quoted" --teacher-serve qwen2.5-coder-1.5b \
  --serve-arg=--teacher-samples=4 --serve-arg=--lr=5e-4 --serve-arg=--gate-backtrack=2 --version-timeout 20m --keep-data "$@" --out $OUT > $OUT/run.log 2>&1
}
run /work/runs/bin-s32a concise 4 concise-15-relfitqgo-s4 --serve-arg=--teacher-select-opening=0.5
run /work/runs/bin-s32a concise 4 concise-15-relfitqgo-rs-s4 --serve-arg=--teacher-select-opening=0.5 --serve-arg=--rehearsal-scale=signal
