#!/bin/bash
# --teacher-fit-retry 4 given (d37e017's binary, bin-s54): signoff seed 4, the learning arm only
nice -n 5 /work/runs/bin-s54 bench learn --target=defaults --personas signoff --seeds 1 --first-seed 4 --keep-data \
  --arms "combine:combine:--teacher-url={teacher}:--teacher-model=clawrl:--teacher-fit-retry=4" \
  --out /work/runs/s53/signoff-s4 > /work/runs/s53/signoff-s4.log 2>&1
echo done
