#!/bin/bash
# v3 served no "TL;DR:" in all three tldr seeds run under today's users
# (BENCHMARKS.md, "A second TL;DR is not an explanation"). Seed 5 again, each with one part
# of the step taken away or changed: the rehearsal anchors (--rehearsal 0: the base model's
# answers to facts, "The capital of Spain is Madrid.", trained at +1 every step), then the
# anchors answered by the teacher under the hint (--rehearsal-follow-hint, opt-in).
# Sixty-second session: the anchors (v3 fell without them too), then, to v3 only
# (VERSIONS=3), two optimizer steps per batch: ARMS=epochs2:combine:$T:--ppo-epochs=2.
BIN=${BIN:-/work/runs/bin-s62b}   # go build -o "$BIN" ./cmd/clawrl
OUT=${OUT:-/work/runs/s62c}
T="--teacher-url={teacher}:--teacher-model=clawrl"
mkdir -p "$OUT"
for A in ${ARMS:-noanchors:combine:$T:--rehearsal=0 follow:combine:$T:--rehearsal-follow-hint}; do
  N=${A%%:*}
  nice -n 5 "$BIN" bench learn --target=defaults --personas tldr --seeds 1 --first-seed 5 --keep-data --versions "${VERSIONS:-8}" \
    --arms "$A" --out "$OUT/tldr-s5-$N" > "$OUT/tldr-s5-$N.log" 2>&1
  echo "tldr-s5-$N done $(date +%T)"
done
echo done
