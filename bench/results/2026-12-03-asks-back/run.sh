#!/bin/bash
# serve's defaults at 30c023e (bin-s54): french seeds 1-6 with the simulated users that no longer like talk that
# does not answer or asks back (bench.Evades), the learning arm only; the other three personas' runs are unchanged by the fix (no
# answer of theirs, rated or held out, changes verdict), so only french is run again
# (fifty-fourth session: stopped after french seed 2 for time; seeds 3-6 not run)
for S in 1 2 3 4 5 6; do
  nice -n 5 /work/runs/bin-s54 bench learn --target=defaults --personas french --seeds 1 --first-seed $S --keep-data \
    --arms "combine:combine:--teacher-url={teacher}:--teacher-model=clawrl" \
    --out /work/runs/s54/french-s$S > /work/runs/s54/french-s$S.log 2>&1
  echo "french-s$S done $(date +%T)"
done
echo done
