#!/bin/sh
# Fifty-eighth session: --distill-focus with the unfocused fallback (a focused step the retention
# gate rejects is taken again without focus; rl.Focuser). The demo model (SmolLM2-135M-Instruct
# Q4_1) with Qwen2.5-Coder-1.5B-Instruct (Q4_K_M) as its teacher, 6 versions of 8.
# BIN: fall-tldr6-s1 and fall-signoff6-s3 ran the working tree of dc0cd76 before its metrics
# counter was added (the same steps; bin-s58f); pair-french6-s1 ran dc0cd76 (bin-s58g); pair-tldr6-s2 and
# pair-concise6-s1 and pair-concise6-s2 ran e850a26 (bin-s58h).
# half-tldr6-s1 (--distill-focus 0.5, main at ac0268d, no fallback) was stopped after v1.
BIN=${BIN:-clawrl}
T='--teacher-url={teacher}:--teacher-model=clawrl'
nice -n 5 $BIN bench learn --model smollm2 --teacher-serve qwen2.5-coder-1.5b --personas tldr --versions 6 --seeds 1 \
  --first-seed 1 --keep-data --arms "focus1f:combine:$T:--distill-focus=1" --out fall-tldr6-s1 > fall-tldr6-s1.log 2>&1
nice -n 5 $BIN bench learn --model smollm2 --teacher-serve qwen2.5-coder-1.5b --personas signoff --versions 6 --seeds 1 \
  --first-seed 3 --keep-data --arms "focus1f:combine:$T:--distill-focus=1" --out fall-signoff6-s3 > fall-signoff6-s3.log 2>&1
nice -n 5 $BIN bench learn --model smollm2 --teacher-serve qwen2.5-coder-1.5b --personas french --versions 6 --seeds 1 \
  --first-seed 1 --keep-data --arms "focus1f:combine:$T:--distill-focus=1,combine:combine:$T" --out pair-french6-s1 > pair-french6-s1.log 2>&1
nice -n 5 $BIN bench learn --model smollm2 --teacher-serve qwen2.5-coder-1.5b --personas tldr --versions 6 --seeds 1 \
  --first-seed 2 --keep-data --arms "focus1f:combine:$T:--distill-focus=1,combine:combine:$T" --out pair-tldr6-s2 > pair-tldr6-s2.log 2>&1
nice -n 5 $BIN bench learn --model smollm2 --teacher-serve qwen2.5-coder-1.5b --personas concise --versions 6 --seeds 1 \
  --first-seed 1 --keep-data --arms "focus1f:combine:$T:--distill-focus=1,combine:combine:$T" --out pair-concise6-s1 > pair-concise6-s1.log 2>&1
nice -n 5 $BIN bench learn --model smollm2 --teacher-serve qwen2.5-coder-1.5b --personas concise --versions 6 --seeds 1 \
  --first-seed 2 --keep-data --arms "focus1f:combine:$T:--distill-focus=1,combine:combine:$T" --out pair-concise6-s2 > pair-concise6-s2.log 2>&1
