#!/bin/bash
# After five.sh: tldr seed 3 with --first-epochs 2 at the default lr 1e-3, warmed up over 4 steps
# (lr/4, lr/2 for v1's two steps, 3lr/4 for v2's, lr from v3): small early steps, the default rate later.
[ -n "$AFTER" ] && while kill -0 "$AFTER" 2>/dev/null; do sleep 10; done
BIN=${BIN:-/work/runs/bin-s65w}   # go build -o "$BIN" ./cmd/clawrl
OUT=${OUT:-/work/runs/s65}
T="--teacher-url={teacher}:--teacher-model=clawrl"
nice -n 5 "$BIN" bench learn --target=defaults --personas tldr --seeds 1 --first-seed 3 --keep-data --versions 3 \
  --arms "warm4:combine:$T:--first-epochs=2:--lr-warmup=4" --out "$OUT/tldr-s3-warm4" > "$OUT/tldr-s3-warm4.log" 2>&1
echo "tldr-s3-warm4 done $(date +%T)"
