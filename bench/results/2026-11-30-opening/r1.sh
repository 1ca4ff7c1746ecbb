#!/bin/bash
# french seed 1, the quoted arm (relevance + fit + quoted) with the gate (loops on by default) and backtrack 2; binary bin-s31 = 20a4aeb
BIN=/work/runs/bin-s31
run() { P=$1; S=$2; NAME=$3; shift 3
OUT=/work/runs/s31/$NAME
mkdir -p $OUT
nice -n 5 $BIN bench learn --model qwen2.5-coder-1.5b --personas $P --versions 6 --first-seed $S \
  --arms "combine-t15:combine:--teacher-url={teacher}:--teacher-model=clawrl:--teacher-select-relevance:--teacher-select-length=fit:--teacher-select-quoted" --teacher-serve qwen2.5-coder-1.5b \
  --serve-arg=--teacher-samples=4 --serve-arg=--lr=5e-4 --serve-arg=--gate-backtrack=2 --version-timeout 20m --keep-data "$@" --out $OUT > $OUT/run.log 2>&1
}
run french 1 french-15-relfitqg-s1
