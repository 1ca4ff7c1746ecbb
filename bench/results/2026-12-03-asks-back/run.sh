#!/bin/bash
# serve's defaults: french seeds 1-6 with the simulated users that no longer like talk that
# does not answer or asks back (bench.Evades), the learning arm only; the other three personas' runs are unchanged by the fix (no
# answer of theirs, rated or held out, changes verdict), so only french is run again.
# Seeds 1-2: fifty-fourth session, bin-s54 = 30c023e (stopped after seed 2 for time).
# Seeds 3-6: fifty-fifth session, bin-s55 = fd91096 (the same users: 1a349ed and fd91096 change a test count and a refactor).
BIN=${BIN:-/work/runs/bin-s55}
for S in ${SEEDS:-1 2 3 4 5 6}; do
  nice -n 5 $BIN bench learn --target=defaults --personas french --seeds 1 --first-seed $S --keep-data \
    --arms "combine:combine:--teacher-url={teacher}:--teacher-model=clawrl" \
    --out /work/runs/s55/french-s$S > /work/runs/s55/french-s$S.log 2>&1
  echo "french-s$S done $(date +%T)"
done
echo done
