#!/bin/bash
# tldr seed 3 on serve's defaults (the protocol: the 1.5B its own teacher, 8 x 16)
# on this session's AMX Xeon, first with the AMX tiles off (CLAWRL_AMX=0: the VDPBF16PS
# chain, whose bits the Zen 4 runs recorded), then on. The recorded run:
# bench/results/2026-12-04-summary-once/tldr-s3-defaults.
BIN=${BIN:-/work/runs/bin-amx}   # go build -o "$BIN" ./cmd/clawrl
OUT=${OUT:-/work/runs/amx}
mkdir -p "$OUT"
for A in noamx amx; do
  E=()
  [ "$A" = noamx ] && E=(CLAWRL_AMX=0)
  env "${E[@]}" nice -n 5 "$BIN" bench learn --target=defaults --personas tldr --seeds 1 --first-seed 3 --keep-data \
    --out "$OUT/tldr-s3-$A" > "$OUT/tldr-s3-$A.log" 2>&1
  echo "tldr-s3-$A done $(date +%T)"
done
echo done
