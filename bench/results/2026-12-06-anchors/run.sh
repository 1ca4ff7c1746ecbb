#!/bin/bash
# The Combined row's protocol (serve's defaults, 8 versions x 16 rated turns) with the
# extra serve flags in ARGS (colon-separated, as --arms takes them), the learning arm only,
# one persona-seed at a time, named "combine" so that
# `clawrl bench compare --rescore RECORDED OUT/P-sS` pairs each run with the recorded one
# (bench/results/combined-pool/P-sS for seeds 1-6, bench/results/combined-pool-7-9/P-sS
# for 7-9). Where a recorded run was rated by older simulated users (`bench compare --rescore`
# names the first rating today's would send otherwise), compare with a run of serve's defaults
# under today's: ARGS=--rehearsal-avoid-relative=false (defaults/ holds french seeds 7 and 4,
# redraw/ the others the pools count; hold85/ repeats three of redraw/ with
# ARGS=--rehearsal-avoid-relative=false:--hold-liked=0.85, hold60/ tldr seed 2 with 0.6;
# ../2026-12-07-bf16avx2/redraw/ six of redraw/'s float32 runs drawn again in bf16).
# From the repository root:
#
#   go build -o /tmp/clawrl ./cmd/clawrl
#   RUNS='french:8 french:7' ARGS='--rehearsal-scale=signal' BIN=/tmp/clawrl OUT=/tmp/anchors bash bench/results/2026-12-06-anchors/run.sh
BIN=${BIN:-clawrl}
OUT=${OUT:-anchors}
ARGS=${ARGS:---rehearsal-scale=signal}
mkdir -p "$OUT"
for PS in ${RUNS:-french:8 french:7}; do
  P=${PS%%:*}; S=${PS##*:}
  nice -n 5 "$BIN" bench learn --target=defaults --personas "$P" --seeds 1 --first-seed "$S" --keep-data \
    --arms "combine:combine:--teacher-url={teacher}:--teacher-model=clawrl:$ARGS" \
    --out "$OUT/$P-s$S" > "$OUT/$P-s$S.log" 2>&1
  echo "$P-s$S done $(date +%T)"
done
echo done
