#!/bin/bash
# DefaultFitRetry 4 under --teacher-fit-retry-scope quoted (bin-s51b): tldr s1, signoff s1 on serve's defaults, the learning arm only
while pgrep -f "bin-s51 bench learn" > /dev/null; do sleep 10; done
for PS in tldr:1 signoff:1 tldr:2; do
  P=${PS%:*}; S=${PS#*:}
  nice -n 5 /work/runs/bin-s51b bench learn --target=defaults --personas $P --seeds 1 --first-seed $S --keep-data \
    --arms "combine:combine:--teacher-url={teacher}:--teacher-model=clawrl" \
    --out /work/runs/s51/scoped-$P-s$S > /work/runs/s51/scoped-$P-s$S.log 2>&1
  echo "scoped-$P-s$S done $(date +%T)"
done
echo done
