#!/bin/bash
# as run.sh, seed 3
nice -n 5 /work/runs/bin-s50 bench learn --target=defaults --personas signoff --seeds 1 --first-seed 3 --keep-data \
  --arms "combine:combine:--teacher-url={teacher}:--teacher-model=clawrl:--teacher-fit-retry=4" \
  --out /work/runs/s50/signoff-s3 > /work/runs/s50/signoff-s3.log 2>&1
echo done
