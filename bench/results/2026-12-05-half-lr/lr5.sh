#!/bin/bash
# tldr seed 3, --first-epochs 2 at half the default LoRA rate (--lr 5e-4), to v3: does the third-step fall follow the step size?
BIN=${BIN:-/work/runs/bin-s65}   # go build -o "$BIN" ./cmd/clawrl
OUT=${OUT:-/work/runs/s65}
T="--teacher-url={teacher}:--teacher-model=clawrl"
nice -n 5 "$BIN" bench learn --target=defaults --personas tldr --seeds 1 --first-seed 3 --keep-data --versions 3 \
  --arms "lr5:combine:$T:--first-epochs=2:--lr=5e-4" --out "$OUT/tldr-s3-lr5" > "$OUT/tldr-s3-lr5.log" 2>&1
echo "tldr-s3-lr5 done $(date +%T)"
