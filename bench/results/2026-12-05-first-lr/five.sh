#!/bin/bash
# A rate that falls after the first batch: --first-epochs 2 --first-lr 1e-3 (the first batch's two steps at the
# default rate, first2's v1), --lr 5e-4 after (half-rate's v2 on), on the five persona-seeds of the first2 runs, 8 × 16.
# The sixty-sixth session stopped it after french 1 and ran signoff 5 alone afterwards with the same command.
BIN=${BIN:-/work/runs/bin-s66}   # go build -o "$BIN" ./cmd/clawrl
OUT=${OUT:-/work/runs/s66}
T="--teacher-url={teacher}:--teacher-model=clawrl"
for ps in "tldr 3" "tldr 5" "french 2" "french 1" "signoff 5"; do
  set -- $ps
  nice -n 5 "$BIN" bench learn --target=defaults --personas $1 --seeds 1 --first-seed $2 --keep-data \
    --arms "fall:combine:$T:--first-epochs=2:--first-lr=1e-3:--lr=5e-4" --out "$OUT/$1-s$2-fall" > "$OUT/$1-s$2-fall.log" 2>&1
  echo "$1-s$2 done $(date +%T)"
done
