#!/bin/bash
# the protocol, 8 versions of 16 rated turns, on french, seed 1: main at the newest-first teacher
# (same command as ../2026-11-28-relevance/queue8.sh, which stalled at round 7 on the FIFO teacher)
BIN=${BIN:-/work/runs/bin-fresh}
OUT=/work/runs/fresh-french-8x16-seed1; mkdir -p $OUT
nice -n 5 $BIN bench learn --model qwen2.5-coder-0.5b --personas french --versions 8 --per-version 16 --first-seed 1 \
  --arms "combine-t15:combine:--teacher-url={teacher}:--teacher-model=clawrl" --teacher-serve qwen2.5-coder-1.5b \
  --serve-arg=--teacher-samples=4 --serve-arg=--lr=5e-4 --serve-arg=--gate-backtrack=2 --keep-data --out $OUT > $OUT/run.log 2>&1
