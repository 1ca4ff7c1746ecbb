#!/bin/sh
# Fifty-seventh session: the demo model (SmolLM2-135M-Instruct Q4_1) with Qwen2.5-Coder-1.5B-Instruct
# (Q4_K_M) as its teacher, 6 versions of 8, --distill-focus 1 against none. BIN: main at 21463b1
# (bin-s57); norm1-tldr-s1 ran a scratch build with norm.diff applied (bin-s57n), not committed.
BIN=${BIN:-clawrl}
T='--teacher-url={teacher}:--teacher-model=clawrl'
for s in 2 3; do
nice -n 5 $BIN bench learn --model smollm2 --teacher-serve qwen2.5-coder-1.5b --personas signoff --versions 6 --seeds 1 \
  --first-seed $s --keep-data --arms "focus1:combine:$T:--distill-focus=1,combine:combine:$T" --out pair-signoff6-s$s > pair-signoff6-s$s.log 2>&1
done
nice -n 5 $BIN bench learn --model smollm2 --teacher-serve qwen2.5-coder-1.5b --personas tldr --versions 6 --seeds 1 \
  --first-seed 1 --keep-data --arms "combine:combine:$T,focus1:combine:$T:--distill-focus=1" --out pair-tldr6-s1 > pair-tldr6-s1.log 2>&1
# the scratch build (norm.diff): focus weights rescaled to mean 1 per sample
nice -n 5 ${BIN_NORM:-clawrl-norm} bench learn --model smollm2 --teacher-serve qwen2.5-coder-1.5b --personas tldr --seeds 1 \
  --first-seed 1 --keep-data --arms "norm1:combine:$T:--distill-focus=1" --out norm1-tldr-s1 > norm1-tldr-s1.log 2>&1
