#!/bin/bash
# the arm with --hold-liked 0.75 at seed 1 (bin-s35)

run() { BIN=$1; P=$2; S=$3; NAME=$4; shift 4
OUT=/work/runs/s36/$NAME
mkdir -p $OUT
nice -n 5 $BIN bench learn --model qwen2.5-coder-1.5b --personas $P --versions 6 --first-seed $S \
  --arms "combine-t15:combine:--teacher-url={teacher}:--teacher-model=clawrl:--teacher-select-relevance:--teacher-select-length=fit:--teacher-select-quoted" --teacher-serve qwen2.5-coder-1.5b \
  --serve-arg=--teacher-samples=4 --serve-arg=--lr=5e-4 --serve-arg=--gate-backtrack=2 --version-timeout 20m --keep-data "$@" --out $OUT > $OUT/run.log 2>&1
}
A="--serve-arg=--teacher-select-opening=0.5"
# --hold-liked 0.75 on the arm, seed 1: concise and french (completes the two-seed four-persona figure)
run /work/runs/bin-s35 concise 1 concise-15-relfitqgo-hold-s1 $A --serve-arg=--hold-liked=0.75
run /work/runs/bin-s35 french 1 french-15-relfitqgo-hold-s1 $A --serve-arg=--hold-liked=0.75
