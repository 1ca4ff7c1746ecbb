#!/bin/bash
# the demo model's default grid (control + combine, four personas, 3 versions of 8), 2 seeds, on main with both changes
OUT=/work/runs/pend-smollm2-grid; mkdir -p $OUT
nice -n 5 /work/runs/bin-pend bench learn --model smollm2 --seeds 2 --keep-data --out $OUT > $OUT/run.log 2>&1
