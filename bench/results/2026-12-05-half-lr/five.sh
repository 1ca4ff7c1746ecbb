#!/bin/bash
# --first-epochs 2 at --lr 5e-4 on the five persona-seeds of the sixty-fourth session's first2 runs, 8 × 16.
BIN=${BIN:-/work/runs/bin-s65w}   # go build -o "$BIN" ./cmd/clawrl
OUT=${OUT:-/work/runs/s65}
T="--teacher-url={teacher}:--teacher-model=clawrl"
for ps in "tldr 5" "french 2" "signoff 5" "french 1" "tldr 3"; do
  set -- $ps
  nice -n 5 "$BIN" bench learn --target=defaults --personas $1 --seeds 1 --first-seed $2 --keep-data \
    --arms "first2lr5:combine:$T:--first-epochs=2:--lr=5e-4" --out "$OUT/$1-s$2-first2lr5" > "$OUT/$1-s$2-first2lr5.log" 2>&1
  echo "$1-s$2 done $(date +%T)"
done
