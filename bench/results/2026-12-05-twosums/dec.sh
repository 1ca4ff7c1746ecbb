#!/bin/bash
# decode only: clawrl bench model --decode 256 on the demo GGUF, old (e00b119) and new alternating five times
M=$HOME/.cache/clawrl/models/SmolLM2-135M-Instruct.Q4_1.gguf
for i in 1 2 3 4 5; do for b in old new; do
  echo "== $b $i $(date -u +%H:%M:%S)"
  ./clawrl-$b bench model --model $M --dtype quant-f32 --decode 256 --threads 2 2>&1 | grep -E "clawrl  |bound"
done; done
