#!/bin/bash
# SmolLM2 default grid with --teacher-quoted-retry 4 on the learning arm (bin-s46), against g6.sh's default grid (bench/results/2026-12-02-avoid-default/grid-avoid)
mkdir -p /work/runs/s46/grid
nice -n 5 /work/runs/bin-s46 bench learn --model smollm2 --seeds 2 \
  --arms "off,combine:combine:--teacher-quoted-retry=4" \
  --keep-data --out /work/runs/s46/grid/retry > /work/runs/s46/grid/retry.log 2>&1
