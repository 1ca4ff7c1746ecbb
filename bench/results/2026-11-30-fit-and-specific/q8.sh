#!/bin/bash
# 1.5B student, --teacher-select-relevance plus --teacher-select-length=fit; french seed 1, then concise seed 2, alone
# binary 802ca63 (bin-s27, the product code at 6e77170)
BIN=/work/runs/bin-s27
run() { P=$1; S=$2
OUT=/work/runs/s28/$P-15-relfit-s$S
mkdir -p $OUT
nice -n 5 $BIN bench learn --model qwen2.5-coder-1.5b --personas $P --versions 6 --first-seed $S \
  --arms "combine-t15:combine:--teacher-url={teacher}:--teacher-model=clawrl:--teacher-select-relevance:--teacher-select-length=fit" --teacher-serve qwen2.5-coder-1.5b \
  --serve-arg=--teacher-samples=4 --serve-arg=--lr=5e-4 --serve-arg=--gate-backtrack=2 --version-timeout 20m --keep-data --out $OUT > $OUT/run.log 2>&1
}
run french 1
run concise 2
