#!/bin/bash
# Two more persona-seeds with the AMX tiles on (this Xeon's default), the sixty-ninth
# session's binary (batch-invariant quant-f32 kernels; the 1.5B's Q4_K path unchanged):
# signoff seeds 1 and 2 (recorded: 2026-12-03-quoted-fit/signoff-s1, -s2), on the Zen 4.
BIN=${BIN:-/work/runs/bin-amx}   # go build -o "$BIN" ./cmd/clawrl
OUT=${OUT:-/work/runs/amx}
mkdir -p "$OUT"
for PS in ${RUNS:-signoff:1 signoff:2}; do
  P=${PS%%:*}; S=${PS##*:}
  nice -n 5 "$BIN" bench learn --target=defaults --personas "$P" --seeds 1 --first-seed "$S" --keep-data \
    --out "$OUT/$P-s$S-amx" > "$OUT/$P-s$S-amx.log" 2>&1
  echo "$P-s$S-amx done $(date +%T)"
done
echo done
