#!/bin/bash
# The tldr users dislike a second TL;DR (bench.SummarisesOnce): tldr seeds on serve's
# defaults (the protocol, the 1.5B its own teacher, 8 x 16), then under
# --distill-focus 1, against the same persona-seeds of the six-seed pool and of
# 2026-12-04-focus-target/ (re-read with today's users: _rescore).
# Sixty-second session: RUNS="defaults:5 defaults:3 defaults:6 focus:3" (seeds 1, 2 and 4 read 19-20 at v8 re-read).
BIN=${BIN:-/work/runs/bin-s62b}   # go build -o "$BIN" ./cmd/clawrl
OUT=${OUT:-/work/runs/s62b}
FOCUS="focus1:combine:--teacher-url={teacher}:--teacher-model=clawrl:--distill-focus=1"
mkdir -p "$OUT"
for RS in ${RUNS:-defaults:5 defaults:3 focus:3 focus:4}; do
  A=${RS%%:*}; S=${RS##*:}
  ARGS=()
  [ "$A" = focus ] && ARGS=(--arms "$FOCUS")
  nice -n 5 "$BIN" bench learn --target=defaults --personas tldr --seeds 1 --first-seed "$S" --keep-data \
    "${ARGS[@]}" --out "$OUT/tldr-s$S-$A" > "$OUT/tldr-s$S-$A.log" 2>&1
  echo "tldr-s$S-$A done $(date +%T)"
done
echo done
