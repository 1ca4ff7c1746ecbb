#!/bin/bash
# SmolLM2 default grid on bin-s47 (the working tree with --teacher-quoted-retry 4 as serve's default), no arm flags: the new defaults' grid, against g6.sh's (2026-12-02-avoid-default/grid-avoid) and g7.sh's (the flag given, beside CI)
mkdir -p /work/runs/s47/grid
nice -n 5 /work/runs/bin-s47 bench learn --model smollm2 --seeds 2 \
  --keep-data --out /work/runs/s47/grid/default-retry > /work/runs/s47/grid/default-retry.log 2>&1
