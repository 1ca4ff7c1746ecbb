#!/bin/bash
# the protocol, 8 versions of 16 rated turns, on french (the binding persona), seed 1, main's defaults
OUT=/work/runs/french-8x16-seed1; mkdir -p $OUT
nice -n 5 /work/runs/bin-head bench learn --model qwen2.5-coder-0.5b --personas french --versions 8 --per-version 16 --first-seed 1 \
  --arms "combine-t15:combine:--teacher-url={teacher}:--teacher-model=clawrl" --teacher-serve qwen2.5-coder-1.5b \
  --serve-arg=--teacher-samples=4 --serve-arg=--lr=5e-4 --serve-arg=--gate-backtrack=2 --keep-data --out $OUT > $OUT/run.log 2>&1
