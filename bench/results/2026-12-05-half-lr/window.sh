#!/bin/bash
# The window between a first version that refuses (moved too little) and a third step that falls
# (moved too much): at half the rate, do three steps for the first batch end french's v1 refusals
# (french seed 2, to v2), and keep tldr's opening past the third step (tldr seed 3, to v3)?
[ -n "$AFTER" ] && while kill -0 "$AFTER" 2>/dev/null; do sleep 10; done
BIN=${BIN:-/work/runs/bin-s65w}   # go build -o "$BIN" ./cmd/clawrl
OUT=${OUT:-/work/runs/s65}
T="--teacher-url={teacher}:--teacher-model=clawrl"
for ps in "french 2 2" "tldr 3 3"; do
  set -- $ps
  nice -n 5 "$BIN" bench learn --target=defaults --personas $1 --seeds 1 --first-seed $2 --keep-data --versions $3 \
    --arms "first3lr5:combine:$T:--first-epochs=3:--lr=5e-4" --out "$OUT/$1-s$2-first3lr5" > "$OUT/$1-s$2-first3lr5.log" 2>&1
  echo "$1-s$2-first3lr5 done $(date +%T)"
done
