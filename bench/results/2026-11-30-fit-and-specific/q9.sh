#!/bin/bash
# after q8's french seed 1: tldr seed 1 with --specific-feedback (binary bin-s28 = 8c186fa), then concise seed 2 (same arm), alone
while kill -0 4498 2>/dev/null; do sleep 20; done
BIN=/work/runs/bin-s28
run() { P=$1; S=$2; NAME=$3; shift 3
OUT=/work/runs/s28/$NAME
mkdir -p $OUT
nice -n 5 $BIN bench learn --model qwen2.5-coder-1.5b --personas $P --versions 6 --first-seed $S \
  --arms "combine-t15:combine:--teacher-url={teacher}:--teacher-model=clawrl:--teacher-select-relevance:--teacher-select-length=fit" --teacher-serve qwen2.5-coder-1.5b \
  --serve-arg=--teacher-samples=4 --serve-arg=--lr=5e-4 --serve-arg=--gate-backtrack=2 --version-timeout 20m --keep-data "$@" --out $OUT > $OUT/run.log 2>&1
}
run tldr 1 tldr-15-relfit-spec-s1 --specific-feedback
run concise 2 concise-15-relfit-s2
