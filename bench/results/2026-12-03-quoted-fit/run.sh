#!/bin/bash
# --teacher-fit-retry 4 given, the quoted retry's pick fitting too (bin-s50): signoff seeds 5, 6, 4, 1, 2, the learning arm only
for S in 5 6 4 1 2; do  # then run3.sh: seed 3
  nice -n 5 /work/runs/bin-s50 bench learn --target=defaults --personas signoff --seeds 1 --first-seed $S --keep-data \
    --arms "combine:combine:--teacher-url={teacher}:--teacher-model=clawrl:--teacher-fit-retry=4" \
    --out /work/runs/s50/signoff-s$S > /work/runs/s50/signoff-s$S.log 2>&1
done
echo done
