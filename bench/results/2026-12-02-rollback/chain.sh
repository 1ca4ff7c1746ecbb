#!/bin/bash
# one run at a time: tldr seeds 3, 1, 2 with --rollback-drop 0.3 (bin-s49 = 53b5dc1's code), then a fourth seed on the defaults (bin-s48 = 17aa3a4)
R() { # persona seed out
  nice -n 5 /work/runs/bin-s49 bench learn --target=defaults --personas $1 --seeds 1 --first-seed $2 \
    --arms "combine:combine:--teacher-url={teacher}:--teacher-model=clawrl:--rollback-drop=0.3" --keep-data \
    --out /work/runs/s49/$3 > /work/runs/s49/$3.log 2>&1
}
R tldr 3 tldr-s3-rollback
R tldr 1 tldr-s1-rollback
R tldr 2 tldr-s2-rollback
for P in concise tldr french signoff; do
  nice -n 5 /work/runs/bin-s48 bench learn --target=defaults --personas $P --seeds 1 --first-seed 4 --keep-data \
    --out /work/runs/s48/seed4/$P-s4 > /work/runs/s48/seed4/$P-s4.log 2>&1
done
echo done
