#!/bin/bash
# The step after the first two-step version sends tldr's answers back to the base model's (tldr
# seeds 3 and 5: v1 opens 20 of 20 held-out answers with "TL;DR:", v2 none) on a batch whose
# every sample opens with "TL;DR:" (_batch). Is it the rehearsal anchors (the base model's own
# answers to 24 other questions, trained at every step), whose loss is large once v1 answers them
# with a TL;DR too? tldr seed 3 under --first-epochs 2 with --rehearsal 0, to v3.
BIN=${BIN:-/work/runs/bin-s64}
OUT=${OUT:-/work/runs/s64}
T="--teacher-url={teacher}:--teacher-model=clawrl"
[ -n "$AFTER" ] && while kill -0 "$AFTER" 2>/dev/null; do sleep 10; done
nice -n 5 "$BIN" bench learn --target=defaults --personas tldr --seeds 1 --first-seed 3 --keep-data --versions 3 \
  --arms "noanchors:combine:$T:--first-epochs=2:--rehearsal=0" --out "$OUT/tldr-s3-noanchors" > "$OUT/tldr-s3-noanchors.log" 2>&1
echo "tldr-s3-noanchors done $(date +%T)"
# Then: the same with AdamW's first moment zeroed before each version's step
# (--momentum-reset every-step) and the anchors kept: is the knock the carried moment?
nice -n 5 "$BIN" bench learn --target=defaults --personas tldr --seeds 1 --first-seed 3 --keep-data --versions 3 \
  --arms "reset:combine:$T:--first-epochs=2:--momentum-reset=every-step" --out "$OUT/tldr-s3-reset" > "$OUT/tldr-s3-reset.log" 2>&1
echo "tldr-s3-reset done $(date +%T)"
# Then: the first batch's three steps in v1 (--first-epochs 3), to v2: does the fall follow the
# optimizer's third step whatever its batch, or the first step on a new batch after saturation?
nice -n 5 "$BIN" bench learn --target=defaults --personas tldr --seeds 1 --first-seed 3 --keep-data --versions 2 \
  --arms "first3:combine:$T:--first-epochs=3" --out "$OUT/tldr-s3-first3" > "$OUT/tldr-s3-first3.log" 2>&1
echo "tldr-s3-first3 done $(date +%T)"
