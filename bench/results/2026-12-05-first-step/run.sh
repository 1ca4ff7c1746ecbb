#!/bin/bash
# --first-epochs 2: two optimizer steps for the first batch only (the optimizer's first update,
# m̂/√v̂ = g/|g|, moves every LoRA parameter with a gradient by about the learning rate), one for
# every batch after it as on serve's defaults. Two steps on every batch removed the tldr v1
# refusals (0 of 60 against 18-19 per seed) but ended lower at v8 on tldr seed 3 (13 and 9
# against 19; BENCHMARKS.md "The first version refuses"). Each run is PERSONA:SEED, one at a
# time. Sixty-fourth session: the default RUNS.
BIN=${BIN:-/work/runs/bin-s64}   # go build -o "$BIN" ./cmd/clawrl
OUT=${OUT:-/work/runs/s64}
T="--teacher-url={teacher}:--teacher-model=clawrl"
mkdir -p "$OUT"
for R in ${RUNS:-tldr:3 french:2 tldr:5}; do
  IFS=: read -r P S <<< "$R"
  nice -n 5 "$BIN" bench learn --target=defaults --personas "$P" --seeds 1 --first-seed "$S" --keep-data \
    --arms "first2:combine:$T:--first-epochs=2" --out "$OUT/$P-s$S-first2" > "$OUT/$P-s$S-first2.log" 2>&1
  echo "$P-s$S-first2 done $(date +%T)"
done
echo done
