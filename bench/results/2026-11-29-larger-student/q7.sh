#!/bin/bash
# 1.5B student, seed 1, --teacher-select-relevance plus --teacher-select-length=fit (the arm of q6.sh); concise then tldr, alone
# binary 802ca63 (Loops splits at punctuation: the user no longer likes "TL;DR:TL;DR:…")
BIN=/work/runs/bin-s27
for P in concise tldr; do
OUT=/work/runs/s27/$P-15-relfit-s1
mkdir -p $OUT
nice -n 5 $BIN bench learn --model qwen2.5-coder-1.5b --personas $P --versions 6 --first-seed 1 \
  --arms "combine-t15:combine:--teacher-url={teacher}:--teacher-model=clawrl:--teacher-select-relevance:--teacher-select-length=fit" --teacher-serve qwen2.5-coder-1.5b \
  --serve-arg=--teacher-samples=4 --serve-arg=--lr=5e-4 --serve-arg=--gate-backtrack=2 --version-timeout 20m --keep-data --out $OUT > $OUT/run.log 2>&1
done
