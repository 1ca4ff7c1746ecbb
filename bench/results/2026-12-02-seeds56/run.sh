#!/bin/bash
# a fifth seed on the defaults (rollback 0.6 on), bin-s50 = bc95041
for P in tldr french signoff concise; do
  nice -n 5 /work/runs/bin-s50 bench learn --target=defaults --personas $P --seeds 1 --first-seed 5 --keep-data \
    --out /work/runs/s50/seed5/$P-s5 > /work/runs/s50/seed5/$P-s5.log 2>&1
done
echo done
