#!/bin/bash
# SmolLM2 default grid on the working tree after 7b7dbc2 with --hold-liked 0.75 (min 8 rated) as the default: the new defaults' grid.
nice -n 5 /work/runs/bin-s44b bench learn --model smollm2 --seeds 2 \
  --keep-data --out /work/runs/s44/grid/hold > /work/runs/s44/grid/hold.log 2>&1
