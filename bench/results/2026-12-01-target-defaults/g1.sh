#!/bin/bash
# SmolLM2 default grid (4 personas x 3 versions of 8, two seeds) with the 1.5B's best setting as flags (lr and teacher left at the demo model's defaults)
B=/work/runs/bin-s43
nice -n 5 $B bench learn --model smollm2 --seeds 2 \
  --arms "off,best:combine:--teacher-samples=4:--teacher-select-relevance:--teacher-select-length=fit:--teacher-select-quoted:--teacher-select-opening=0.5:--gate-backtrack=2:--hold-liked=0.75:--rehearsal-avoid:--rehearsal-avoid-wrong:--rehearsal-avoid-bound=2" \
  --keep-data --out /work/runs/s43/grid/best > /work/runs/s43/grid/best.log 2>&1
