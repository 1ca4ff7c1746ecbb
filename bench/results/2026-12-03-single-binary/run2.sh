#!/bin/bash
# serve's defaults at a644339 (bin-s52): concise seeds 1-6, the learning arm only
for S in 1 2 3 4 5 6; do
  nice -n 5 /work/runs/bin-s52 bench learn --target=defaults --personas concise --seeds 1 --first-seed $S --keep-data \
    --arms "combine:combine:--teacher-url={teacher}:--teacher-model=clawrl" \
    --out /work/runs/s52/concise-s$S > /work/runs/s52/concise-s$S.log 2>&1
  echo "concise-s$S done $(date +%T)"
done
echo done
