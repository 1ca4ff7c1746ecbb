#!/bin/bash
run() { BIN=$1; P=$2; S=$3; NAME=$4; shift 4
OUT=/work/runs/s39/$NAME
mkdir -p $OUT
nice -n 5 $BIN bench learn --model qwen2.5-coder-1.5b --personas $P --versions 6 --first-seed $S \
  --arms "combine-t15:combine:--teacher-url={teacher}:--teacher-model=clawrl:--teacher-select-relevance:--teacher-select-length=fit:--teacher-select-quoted" --teacher-serve qwen2.5-coder-1.5b \
  --serve-arg=--teacher-samples=4 --serve-arg=--lr=5e-4 --serve-arg=--gate-backtrack=2 --version-timeout 20m --keep-data "$@" --out $OUT > $OUT/run.log 2>&1
}
A="--serve-arg=--teacher-select-opening=0.5"
H="--serve-arg=--hold-liked=0.75"
V="--serve-arg=--rehearsal-avoid --serve-arg=--rehearsal-avoid-wrong --serve-arg=--rehearsal-avoid-bound=2"
# french seed 6 without the avoid flags (bin-s39f): pairs with french-15-relfitqgo-hold-avoidwrong-facts6-s6
run /work/runs/bin-s39f french 6 french-15-relfitqgo-hold-facts6-s6 $A $H
