#!/bin/bash
# Binary RL and OPD on the Combined row's protocol: serve's defaults, 8 versions x 16 rated turns,
# Qwen2.5-Coder-1.5B-Instruct as student and (through --target's teacher server) its own teacher,
# with --method rl or --method opd in place of combine; one persona-seed-method at a time, each in
# its own folder (OUT/METHOD-P-sS). The Combined runs of the same persona-seeds are the pool's
# (bench/results/combined-pool/P-sS). From the repository root:
#
#   go build -o /tmp/clawrl ./cmd/clawrl
#   RUNS='concise:1 french:1 tldr:1 signoff:1' BIN=/tmp/clawrl OUT=/tmp/methods bash bench/results/2026-12-06-methods/run.sh
#
# The seventy-ninth session ran concise and french at seed 1 with both methods, and tldr under rl
# to v7 (stopped there; its log only): BENCHMARKS.md, "Runs rated by other users …", part 3.
# The eightieth session ran opd at french seed 1 again once the hold read the answers OPD makes no
# sample of (RUNS=french:1 METHODS=opd; hold/): BENCHMARKS.md, "The hold under OPD …".
# The eighty-sixth session ran signoff at seed 1 with both methods (RUNS=signoff:1; binary 5cdb231,
# an Intel Xeon with VDPBF16PS): BENCHMARKS.md, "Binary RL and OPD on signoff".
# The eighty-seventh session ran opd at tldr seed 1 (RUNS=tldr:1 METHODS=opd; binary 4706cfb, the same
# Xeon): BENCHMARKS.md, "OPD on tldr".
BIN=${BIN:-clawrl}
OUT=${OUT:-methods}
mkdir -p "$OUT"
for PS in ${RUNS:-concise:1 french:1 tldr:1 signoff:1}; do
  P=${PS%%:*}; S=${PS##*:}
  for M in ${METHODS:-rl opd}; do
    nice -n 5 "$BIN" bench learn --target=defaults --personas "$P" --seeds 1 --first-seed "$S" --keep-data \
      --arms "$M:$M:--teacher-url={teacher}:--teacher-model=clawrl" \
      --out "$OUT/$M-$P-s$S" > "$OUT/$M-$P-s$S.log" 2>&1
    echo "$M-$P-s$S done $(date +%T)"
  done
done
echo done
