#!/bin/bash
run() { BIN=$1; P=$2; S=$3; NAME=$4; shift 4
OUT=/work/runs/s40/$NAME
mkdir -p $OUT
nice -n 5 $BIN bench learn --model qwen2.5-coder-1.5b --personas $P --versions 8 --per-version 16 --first-seed $S \
  --arms "combine-t15:combine:--teacher-url={teacher}:--teacher-model=clawrl:--teacher-select-relevance:--teacher-select-length=fit:--teacher-select-quoted" --teacher-serve qwen2.5-coder-1.5b \
  --serve-arg=--teacher-samples=4 --serve-arg=--lr=5e-4 --serve-arg=--gate-backtrack=2 --version-timeout 20m --keep-data "$@" --out $OUT > $OUT/run.log 2>&1
}
A="--serve-arg=--teacher-select-opening=0.5"
H="--serve-arg=--hold-liked=0.75"
V="--serve-arg=--rehearsal-avoid --serve-arg=--rehearsal-avoid-wrong --serve-arg=--rehearsal-avoid-bound=2"
# the protocol, 8 versions x 16 rated turns, seed 1, the full setting (hold + avoid flags), binary bin-s40 (e4343c4)
run /work/runs/bin-s40 signoff 1 signoff-816-relfitqgo-hold-avoidwrong-s1 $A $H $V
run /work/runs/bin-s40 french 1 french-816-relfitqgo-hold-avoidwrong-s1 $A $H $V
run /work/runs/bin-s40 tldr 1 tldr-816-relfitqgo-hold-avoidwrong-s1 $A $H $V
run /work/runs/bin-s40 concise 1 concise-816-relfitqgo-hold-avoidwrong-s1 $A $H $V
