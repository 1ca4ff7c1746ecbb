#!/bin/bash
# Two PPO epochs (--ppo-epochs 2: two optimizer steps per batch, the second with the ratio and
# clip live) over 8 versions, on persona-seeds whose runs on serve's defaults fall after a good
# version or serve refusals at v1: tldr v1 ("I'm sorry, but I can't assist with that." to 104
# of the pool's 120 held-out prompts) and v3 (log p("TL") -0.00 -> -7.17 in all three seeds run
# under today's users, BENCHMARKS.md "A second TL;DR is not an explanation"), french v1 (75 of
# 120 refused), signoff seed 5 (a fall to 0 at v4).
# The reading under test: once a token is saturated its gradient vanishes, and one AdamW step
# taken for the other tokens knocks it off; a second epoch sees the ratio fall and pulls it back.
# Each run is PERSONA:SEED:ARM; ARM epochs2 (two steps at serve's lr, 1e-3) or halves (two steps
# at half of it: the same step budget as the defaults' one, taken in two). Sixty-third session:
# the default RUNS, one at a time (tldr seed 3 and signoff seed 5 under both arms).
BIN=${BIN:-/work/runs/bin-s63}   # go build -o "$BIN" ./cmd/clawrl
OUT=${OUT:-/work/runs/s63}
T="--teacher-url={teacher}:--teacher-model=clawrl"
declare -A ARM=([epochs2]="--ppo-epochs=2" [halves]="--ppo-epochs=2:--lr=5e-4")
mkdir -p "$OUT"
[ -n "$AFTER" ] && while kill -0 "$AFTER" 2>/dev/null; do sleep 10; done   # a run already under way
for R in ${RUNS:-tldr:3:epochs2 signoff:5:epochs2 tldr:3:halves french:2:halves signoff:5:halves tldr:6:halves}; do
  IFS=: read -r P S A <<< "$R"
  nice -n 5 "$BIN" bench learn --target=defaults --personas "$P" --seeds 1 --first-seed "$S" --keep-data \
    --arms "$A:combine:$T:${ARM[$A]}" --out "$OUT/$P-s$S-$A" > "$OUT/$P-s$S-$A.log" 2>&1
  echo "$P-s$S-$A done $(date +%T)"
done
echo done
