#!/bin/bash
# SmolLM2 default grid on the working tree after 71e2b87 with the avoid trio (--rehearsal-avoid --rehearsal-avoid-wrong --rehearsal-avoid-bound 2) on by default where anchors and the gate are: the new defaults' grid, against g5.sh's.
nice -n 5 /work/runs/bin-s45a bench learn --model smollm2 --seeds 2 \
  --keep-data --out /work/runs/s45/grid/avoid > /work/runs/s45/grid/avoid.log 2>&1
