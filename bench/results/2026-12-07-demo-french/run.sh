#!/bin/bash
# French on the demo model (SmolLM2-135M-Instruct Q4_1), seed 1, the protocol (8 versions of
# 16 rated turns), the 1.5B as teacher with --distill-focus 1 as in ../2026-12-07-demo-8x16 (whose
# french-s1 is the same setting without these flags: all 8 versions rejected by the retention gate),
# with three levers against the gate's refusal, one arm each:
#   fh:  --rehearsal-follow-hint (the rehearsal anchors in French, as the teacher answers them under the hint)
#   bt:  --gate-backtrack=4 (a rejected step tried at 1/2 … 1/16 of its size, not only 1/2 and 1/4)
#   fhr: --rehearsal-follow-hint --gate-repair=2 (two steps on the French anchors alone before backtracking)
# From the repository root:
#
#   go build -o /tmp/clawrl ./cmd/clawrl
#   BIN=/tmp/clawrl OUT=/tmp/fr bash bench/results/2026-12-07-demo-french/run.sh
#
# The eighty-eighth session ran it (binary 9a7ef82, an Intel Xeon with VDPBF16PS): BENCHMARKS.md,
# "French on the demo model".
BIN=${BIN:-clawrl}
OUT=${OUT:-fr}
T='--teacher-url={teacher}:--teacher-model=clawrl:--distill-focus=1'
mkdir -p "$OUT"
nice -n 5 "$BIN" bench learn --target=defaults --model smollm2 --personas french --seeds 1 --first-seed 1 --keep-data \
  --arms "fh:combine:$T:--rehearsal-follow-hint,bt:combine:$T:--gate-backtrack=4" --out "$OUT/fr-s1" > "$OUT/fr-s1.log" 2>&1
nice -n 5 "$BIN" bench learn --target=defaults --model smollm2 --personas french --seeds 1 --first-seed 1 --keep-data \
  --arms "fhr:combine:$T:--rehearsal-follow-hint:--gate-repair=2" --out "$OUT/fr2-s1" > "$OUT/fr2-s1.log" 2>&1
echo done
