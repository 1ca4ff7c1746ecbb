#!/bin/bash
# (run after q4.sh, alone) 1.5B student, concise then tldr, seed 1, --teacher-select-relevance (binary bf19af2: anchors built while idle)
BIN=/work/runs/bin-s26
for P in concise tldr; do
OUT=/work/runs/s26/$P-15-rel-s1
mkdir -p $OUT
nice -n 5 $BIN bench learn --model qwen2.5-coder-1.5b --personas $P --versions 6 --first-seed 1 \
  --arms "combine-t15:combine:--teacher-url={teacher}:--teacher-model=clawrl:--teacher-select-relevance" --teacher-serve qwen2.5-coder-1.5b \
  --serve-arg=--teacher-samples=4 --serve-arg=--lr=5e-4 --serve-arg=--gate-backtrack=2 --version-timeout 20m --keep-data --out $OUT > $OUT/run.log 2>&1
done
