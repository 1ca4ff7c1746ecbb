#!/bin/bash
# tldr seed 3 on serve's defaults with this round's kernels and the AMX tiles on (the
# default on this box): the new kernels are meant to change no bits, so the run should
# repeat the sixty-seventh session's AMX run (bench/results/2026-12-05-amx/tldr-s3-amx)
# answer for answer.
BIN=${BIN:-/work/runs/bin-new}   # go build -o "$BIN" ./cmd/clawrl
OUT=${OUT:-/work/runs/lora16}
mkdir -p "$OUT"
nice -n 5 "$BIN" bench learn --target=defaults --personas tldr --seeds 1 --first-seed 3 --keep-data \
  --out "$OUT/tldr-s3-amx" > "$OUT/tldr-s3-amx.log" 2>&1
echo "done $(date +%T)"
