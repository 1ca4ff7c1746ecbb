#!/bin/bash
# More draws with the AMX tiles on (this Xeon's default) of persona-seeds whose recorded
# runs were made on the Zen 4 with serve's defaults: tldr seed 5
# (2026-12-04-summary-once/tldr-s5-defaults), french seed 1 (2026-12-03-asks-back/french-s1).
BIN=${BIN:-/work/runs/bin-amx}   # go build -o "$BIN" ./cmd/clawrl
OUT=${OUT:-/work/runs/amx}
mkdir -p "$OUT"
for PS in ${RUNS:-tldr:5 french:1}; do
  P=${PS%%:*}; S=${PS##*:}
  nice -n 5 "$BIN" bench learn --target=defaults --personas "$P" --seeds 1 --first-seed "$S" --keep-data \
    --out "$OUT/$P-s$S-amx" > "$OUT/$P-s$S-amx.log" 2>&1
  echo "$P-s$S-amx done $(date +%T)"
done
echo done
