#!/bin/bash
# tldr seed 3 on serve's defaults (the protocol: the 1.5B its own teacher, 8 x 16)
# with this round's kernels and the AMX tiles off (CLAWRL_AMX=0: the VDPBF16PS chain, whose
# bits the Zen 4 runs recorded). The new kernels are meant to change no bits, so the run
# should repeat the recorded one (bench/results/2026-12-04-summary-once/tldr-s3-defaults)
# answer for answer, as the sixty-seventh session's binary did.
BIN=${BIN:-/work/runs/bin-new}   # go build -o "$BIN" ./cmd/clawrl
OUT=${OUT:-/work/runs/lora16}
mkdir -p "$OUT"
CLAWRL_AMX=0 nice -n 5 "$BIN" bench learn --target=defaults --personas tldr --seeds 1 --first-seed 3 --keep-data \
  --out "$OUT/tldr-s3-noamx" > "$OUT/tldr-s3-noamx.log" 2>&1
echo "done $(date +%T)"
