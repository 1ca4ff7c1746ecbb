#!/bin/bash
# --distill-focus 1 on the protocol, serve's defaults (the 1.5B coder its own teacher, 8 × 16):
# the focused arm alone, one persona-seed after another, against the six-seed pool's runs (compare.py).
# Sixtieth session: RUNS="signoff:1 signoff:2 signoff:3 tldr:1 concise:1 tldr:2 concise:2 concise:3 concise:4 concise:5 concise:6"
# Sixty-first session: RUNS="tldr:3 tldr:4 tldr:5", then s61b/ (9c32d91, the stutter check), then RUNS=french:1.
# Sixty-second session: RUNS=french:2 (on 33d3939). Left for the pool (the default below): french 3-5.
BIN=${BIN:-/work/runs/bin-s60}   # go build -o "$BIN" ./cmd/clawrl
OUT=${OUT:-/work/runs/s60}
ARMS="focus1:combine:--teacher-url={teacher}:--teacher-model=clawrl:--distill-focus=1"
mkdir -p "$OUT"
for PS in ${RUNS:-french:3 french:4 french:5}; do
  P=${PS%%:*}; S=${PS##*:}
  nice -n 5 "$BIN" bench learn --target=defaults --personas "$P" --seeds 1 --first-seed "$S" --keep-data \
    --arms "$ARMS" --out "$OUT/$P-s$S" > "$OUT/$P-s$S.log" 2>&1
  echo "$P-s$S done $(date +%T)"
done
echo done
