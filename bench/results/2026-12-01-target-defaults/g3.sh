#!/bin/bash
# SmolLM2 default grid on dab30f6 (backtrack 2 default) with the avoid trio alone: do the pushed-down catches keep the demo model's steps inside the gate (best bundle: 2 rejected; defaults: 11)?
nice -n 5 /work/runs/bin-s43d bench learn --model smollm2 --seeds 2 \
  --arms "off,avoid:combine:--rehearsal-avoid:--rehearsal-avoid-wrong:--rehearsal-avoid-bound=2" \
  --keep-data --out /work/runs/s43/grid/avoid > /work/runs/s43/grid/avoid.log 2>&1
