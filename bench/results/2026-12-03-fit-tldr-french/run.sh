#!/bin/bash
# --teacher-fit-retry 4 on tldr and french, seeds 1-4 interleaved, the learning arm only (bin-s51 = 3ef5d4f)
for S in 1 2 3 4; do
  for P in tldr french; do
  nice -n 5 /work/runs/bin-s51 bench learn --target=defaults --personas $P --seeds 1 --first-seed $S --keep-data \
    --arms "combine:combine:--teacher-url={teacher}:--teacher-model=clawrl:--teacher-fit-retry=4" \
    --out /work/runs/s51/$P-s$S > /work/runs/s51/$P-s$S.log 2>&1
  echo "$P-s$S done $(date +%T)"
  done
done
echo done
