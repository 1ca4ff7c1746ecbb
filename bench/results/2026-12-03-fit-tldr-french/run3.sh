#!/bin/bash
# After scoped signoff s1: the SmolLM2 default grid on bin-s51b (--teacher-fit-retry 4, scope quoted, by default), against 2026-12-02-defaults-816/grid-default-retry (bin-s47)
while pgrep -f "bin-s51b bench learn" > /dev/null; do sleep 10; done
echo "scoped-signoff-s1 done $(date +%T)"
nice -n 5 /work/runs/bin-s51b bench learn --model smollm2 --seeds 2 \
  --keep-data --out /work/runs/s51/grid-fit > /work/runs/s51/grid-fit.log 2>&1
echo "grid done $(date +%T)"
