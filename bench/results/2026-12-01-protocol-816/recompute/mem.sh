#!/bin/bash
# one LoRA step (16 chats of signoff seed 2's v5 step, 617 tokens trained) on the 1.5B coder, without and with --recompute: peak RSS and wall
cd /work/runs/s42/recompute
for f in none recompute; do
  R=""; [ $f = recompute ] && R=--recompute
  /usr/bin/time -v /work/runs/bin-s42 train sft --model qwen2.5-coder-1.5b --data data.jsonl --batch 16 --seed 1 $R --out out-$f > sft-$f.log 2>&1
  grep -E "Maximum resident|Elapsed \(wall" sft-$f.log
done
