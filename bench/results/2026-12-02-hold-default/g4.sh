#!/bin/bash
# SmolLM2 default grid on dab30f6 (backtrack 2 default) with the teacher-side flags alone (best of 4 + relevance, fit, quoted, opening 0.5): are they what kept the best setting's steps inside the gate (best: 2 rejected; defaults: 11; avoid trio: 10)?
nice -n 5 /work/runs/bin-s43d bench learn --model smollm2 --seeds 2 \
  --arms "off,teacher:combine:--teacher-samples=4:--teacher-select-relevance:--teacher-select-length=fit:--teacher-select-quoted:--teacher-select-opening=0.5" \
  --keep-data --out /work/runs/s44/grid/teacher > /work/runs/s44/grid/teacher.log 2>&1
