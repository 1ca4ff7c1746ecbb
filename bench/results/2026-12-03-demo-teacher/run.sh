#!/bin/sh
# The demo model (SmolLM2-135M-Instruct, Q4_1) as the student, Qwen2.5-Coder-1.5B-Instruct
# (Q4_K_M) through --teacher-serve as the teacher that writes its answers; the default grid
# (3 versions of 8 rated turns, 20 held-out prompts, 8 retention facts), serve's defaults
# otherwise. BIN: a clawrl binary (bin-s56 = 9fe2b7f for grid-s1; bin-s56f = 9fe2b7f plus
# --distill-focus for focus1-s1 and pair-s2). Run one at a time on the 2-core box.
BIN=${BIN:-clawrl}
T='--teacher-url={teacher}:--teacher-model=clawrl'
# seed 1, serve's defaults with the 1.5B teacher
nice -n 5 $BIN bench learn --model smollm2 --teacher-serve qwen2.5-coder-1.5b --seeds 1 --first-seed 1 \
  --keep-data --arms "combine:combine:$T" --out grid-s1 > grid-s1.log 2>&1
# seed 1, --distill-focus 1
nice -n 5 $BIN bench learn --model smollm2 --teacher-serve qwen2.5-coder-1.5b --personas signoff,tldr,concise,french \
  --seeds 1 --first-seed 1 --keep-data --arms "focus1:combine:$T:--distill-focus=1" --out focus1-s1 > focus1-s1.log 2>&1
# seed 2, both arms, concise and signoff
nice -n 5 $BIN bench learn --model smollm2 --teacher-serve qwen2.5-coder-1.5b --personas concise,signoff \
  --seeds 1 --first-seed 2 --keep-data --arms "combine:combine:$T,focus1:combine:$T:--distill-focus=1" \
  --out pair-s2 > pair-s2.log 2>&1
# its own teacher (no --teacher-serve: serve's default grid), --distill-focus 1, seeds 1-2
nice -n 5 $BIN bench learn --model smollm2 --personas concise,signoff --seeds 2 --first-seed 1 --keep-data \
  --arms "focus1:combine:--distill-focus=1" --out own-focus1 > own-focus1.log 2>&1
# signoff, seed 1, 6 versions of 8, the 1.5B teacher with --distill-focus 1 and without (bin-s56f)
nice -n 5 $BIN bench learn --model smollm2 --teacher-serve qwen2.5-coder-1.5b --personas signoff --versions 6 --seeds 1 \
  --first-seed 1 --keep-data --arms "focus1:combine:$T:--distill-focus=1" --out focus1-signoff6-s1 > focus1-signoff6-s1.log 2>&1
nice -n 5 $BIN bench learn --model smollm2 --teacher-serve qwen2.5-coder-1.5b --personas signoff --versions 6 --seeds 1 \
  --first-seed 1 --keep-data --arms "combine:combine:$T" --out base-signoff6-s1 > base-signoff6-s1.log 2>&1
