#!/bin/bash
# serve's defaults at head a644339 (bin-s52): tldr seeds 2-6, then signoff seeds 2-3, the learning arm only
for PS in tldr:2 tldr:3 tldr:4 tldr:5 tldr:6 signoff:2 signoff:3; do
  P=${PS%:*}; S=${PS#*:}
  nice -n 5 /work/runs/bin-s52 bench learn --target=defaults --personas $P --seeds 1 --first-seed $S --keep-data \
    --arms "combine:combine:--teacher-url={teacher}:--teacher-model=clawrl" \
    --out /work/runs/s52/$P-s$S > /work/runs/s52/$P-s$S.log 2>&1
  echo "$P-s$S done $(date +%T)"
done
echo done
