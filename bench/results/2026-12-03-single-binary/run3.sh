#!/bin/bash
# serve's defaults at head ab4b3eb (bin-s53; its Go code is a644339's): french seeds 1-6, then signoff seeds 4-6, the learning arm only
# (fifty-third session: stopped after french seed 5 for time; french 6 and signoff 4-6 not run)
for PS in french:1 french:2 french:3 french:4 french:5 french:6 signoff:4 signoff:5 signoff:6; do
  P=${PS%:*}; S=${PS#*:}
  nice -n 5 /work/runs/bin-s53 bench learn --target=defaults --personas $P --seeds 1 --first-seed $S --keep-data \
    --arms "combine:combine:--teacher-url={teacher}:--teacher-model=clawrl" \
    --out /work/runs/s53/$P-s$S > /work/runs/s53/$P-s$S.log 2>&1
  echo "$P-s$S done $(date +%T)"
done
echo done
