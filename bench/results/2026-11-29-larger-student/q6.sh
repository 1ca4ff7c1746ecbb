#!/bin/bash
# 1.5B student, signoff seed 1, --teacher-select-relevance plus --teacher-select-length=fit (binary bf19af2), alone
BIN=/work/runs/bin-s26; P=signoff
OUT=/work/runs/s27/$P-15-relfit-s1
mkdir -p $OUT
nice -n 5 $BIN bench learn --model qwen2.5-coder-1.5b --personas $P --versions 6 --first-seed 1 \
  --arms "combine-t15:combine:--teacher-url={teacher}:--teacher-model=clawrl:--teacher-select-relevance:--teacher-select-length=fit" --teacher-serve qwen2.5-coder-1.5b \
  --serve-arg=--teacher-samples=4 --serve-arg=--lr=5e-4 --serve-arg=--gate-backtrack=2 --version-timeout 20m --keep-data --out $OUT > $OUT/run.log 2>&1
