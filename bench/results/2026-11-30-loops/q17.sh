#!/bin/bash
# signoff seed 1, the quoted arm with --gate-loops 4 and no backtrack (a looping step rejected outright, as by default); binary bin-s30g
BIN=/work/runs/bin-s30g
run() { P=$1; S=$2; NAME=$3; shift 3
OUT=/work/runs/s30/$NAME
mkdir -p $OUT
nice -n 5 $BIN bench learn --model qwen2.5-coder-1.5b --personas $P --versions 6 --first-seed $S \
  --arms "combine-t15:combine:--teacher-url={teacher}:--teacher-model=clawrl:--teacher-select-relevance:--teacher-select-length=fit:--teacher-select-quoted" --teacher-serve qwen2.5-coder-1.5b \
  --serve-arg=--teacher-samples=4 --serve-arg=--lr=5e-4 --version-timeout 20m --keep-data "$@" --out $OUT > $OUT/run.log 2>&1
}
run signoff 1 signoff-15-relfitqg0-s1 --serve-arg=--gate-loops=4
