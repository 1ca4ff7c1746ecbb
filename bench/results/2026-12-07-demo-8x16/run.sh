#!/bin/bash
# The demo model (SmolLM2-135M-Instruct Q4_1) on the protocol (8 versions of 16 rated turns),
# with Qwen2.5-Coder-1.5B-Instruct (Q4_K_M, --target's teacher server) as its teacher and
# --distill-focus 1 (what `serve --teacher-serve` sets), beside the control; with OWN=1, serve's
# defaults before `serve --teacher-serve auto` instead (the policy is its own teacher; no teacher
# server, no control: the control is the first run's). One persona-seed at a time, each in its own
# folder (OUT/P-sS, OUT/own-P-sS).
# From the repository root:
#
#   go build -o /tmp/clawrl ./cmd/clawrl
#   RUNS='signoff:1 tldr:1 concise:1 french:1' BIN=/tmp/clawrl OUT=/tmp/demo bash bench/results/2026-12-07-demo-8x16/run.sh
#   OWN=1 RUNS='signoff:1 tldr:1 concise:1 french:1' BIN=/tmp/clawrl OUT=/tmp/demo bash bench/results/2026-12-07-demo-8x16/run.sh
#
# The eighty-seventh session ran both at seed 1, and tldr at seed 2 (binary 4706cfb, an Intel Xeon with VDPBF16PS);
# the eighty-eighth signoff, concise and french at seed 2 with the 1.5B (9a7ef82, the same box): BENCHMARKS.md,
# "The demo model on the protocol"; the eighty-ninth seeds 3 (a2e6182) and 4 (2ae8ca9), the ninetieth
# seed 5 (0779038) and seed 6 (147047b): "Teacher answers written eight at a time", "Two tokens at a time"; the ninety-first seed 7 (587bdd7, an AVX2-only Zen 3): "AVX2's own int8 kernels". Since serve's --teacher-serve auto, OWN=1 turns it off
# (--serve-arg=--teacher-serve=): without that, a server of the demo model starts the 1.5B itself
# where it is in the model cache.
BIN=${BIN:-clawrl}
OUT=${OUT:-demo}
T='--teacher-url={teacher}:--teacher-model=clawrl'
mkdir -p "$OUT"
for PS in ${RUNS:-signoff:1}; do
  P=${PS%%:*}; S=${PS##*:}
  if [ -n "$OWN" ]; then
    NAME=own-$P-s$S
    set -- --teacher-serve= --serve-arg=--teacher-serve= --arms combine
  else
    NAME=$P-s$S
    set -- --arms "off,focus1:combine:$T:--distill-focus=1"
  fi
  nice -n 5 "$BIN" bench learn --target=defaults --model smollm2 --personas "$P" --seeds 1 --first-seed "$S" --keep-data \
    "$@" --out "$OUT/$NAME" > "$OUT/$NAME.log" 2>&1
  echo "$NAME done $(date +%T)"
done
echo done
