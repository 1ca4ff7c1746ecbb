#!/bin/bash
# --teacher-fit-retry 4 (default in the working tree = bin-s52): signoff, tldr, french at seeds 5 and 6, the learning arm only
for PS in signoff:5 signoff:6 tldr:6 tldr:5 french:6 french:5; do
  P=${PS%:*}; S=${PS#*:}
  nice -n 5 /work/runs/bin-s52 bench learn --target=defaults --personas $P --seeds 1 --first-seed $S --keep-data \
    --arms "combine:combine:--teacher-url={teacher}:--teacher-model=clawrl" \
    --out /work/runs/s52/$P-s$S > /work/runs/s52/$P-s$S.log 2>&1
done
echo done
