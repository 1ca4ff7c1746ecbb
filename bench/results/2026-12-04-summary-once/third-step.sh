#!/bin/bash
# v3 served no "TL;DR:" in all three tldr seeds run under today's users
# (BENCHMARKS.md, "A second TL;DR is not an explanation"). Seed 5 again, each with one part
# of the step taken away: the rehearsal anchors (--rehearsal 0), then AdamW's first moment
# across steps (--momentum-reset every-step).
BIN=${BIN:-/work/runs/bin-s62b}   # go build -o "$BIN" ./cmd/clawrl
OUT=${OUT:-/work/runs/s62c}
T="--teacher-url={teacher}:--teacher-model=clawrl"
mkdir -p "$OUT"
for A in ${ARMS:-noanchors:combine:$T:--rehearsal=0 momentum:combine:$T:--momentum-reset=every-step}; do
  N=${A%%:*}
  nice -n 5 "$BIN" bench learn --target=defaults --personas tldr --seeds 1 --first-seed 5 --keep-data \
    --arms "$A" --out "$OUT/tldr-s5-$N" > "$OUT/tldr-s5-$N.log" 2>&1
  echo "tldr-s5-$N done $(date +%T)"
done
echo done
