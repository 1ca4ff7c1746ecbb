#!/bin/bash
OUT=/work/runs/personas3-seed2; mkdir -p $OUT
nice -n 5 /work/runs/bin-default bench learn --model qwen2.5-coder-0.5b --personas concise,tldr,french --versions 6 --first-seed 2 \
  --arms "combine-t15:combine:--teacher-url={teacher}:--teacher-model=clawrl" --teacher-serve qwen2.5-coder-1.5b \
  --serve-arg=--teacher-samples=4 --serve-arg=--lr=5e-4 --serve-arg=--gate-backtrack=2 --keep-data --out $OUT > $OUT/run.log 2>&1
