#!/bin/bash
# after r1: signoff seeds 1, 2 of the quoted arm + gate + backtrack 2 with --loss-mean sample; binary bin-s31m = 20a4aeb + --loss-mean
while pgrep -f r1.sh >/dev/null; do sleep 20; done
BIN=/work/runs/bin-s31m
run() { P=$1; S=$2; NAME=$3; shift 3
OUT=/work/runs/s31/$NAME
mkdir -p $OUT
nice -n 5 $BIN bench learn --model qwen2.5-coder-1.5b --personas $P --versions 6 --first-seed $S \
  --arms "combine-t15:combine:--teacher-url={teacher}:--teacher-model=clawrl:--teacher-select-relevance:--teacher-select-length=fit:--teacher-select-quoted" --teacher-serve qwen2.5-coder-1.5b \
  --serve-arg=--teacher-samples=4 --serve-arg=--lr=5e-4 --serve-arg=--gate-backtrack=2 --version-timeout 20m --keep-data "$@" --out $OUT > $OUT/run.log 2>&1
}
run signoff 1 signoff-15-relfitqg-ms-s1 --serve-arg=--loss-mean=sample
run signoff 2 signoff-15-relfitqg-ms-s2 --serve-arg=--loss-mean=sample
