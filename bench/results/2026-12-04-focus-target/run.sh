#!/bin/bash
# --distill-focus 1 (with the unfocused retake) on the protocol, serve's defaults (1.5B student, its own teacher), signoff
BIN=${BIN:-/work/runs/bin-s59}
DEFARMS="focus1:combine:--teacher-url={teacher}:--teacher-model=clawrl:--distill-focus=1,combine:combine:--teacher-url={teacher}:--teacher-model=clawrl"
P=${P:-signoff}
for S in ${SEEDS:-6}; do
  nice -n 5 $BIN bench learn --target=defaults --personas $P --seeds 1 --first-seed $S --keep-data \
    --arms "${ARMS:-$DEFARMS}" \
    --out /work/runs/s59/$P-s$S > /work/runs/s59/$P-s$S.log 2>&1
  echo "$P-s$S done $(date +%T)"
done
echo done
