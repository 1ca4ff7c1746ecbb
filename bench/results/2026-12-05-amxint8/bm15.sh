#!/bin/bash
# clawrl bench model on the 1.5B protocol's policy (Q4_K_M, quant: int8 activations), prompt 128 and 512, decode 32, old (9b0cad7) and new alternating twice
M=$HOME/.cache/clawrl/models/Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf
cd /work/runs
for i in 1 2; do for b in old new; do
  for P in 128 512; do
  echo "== $b $i prompt $P $(date -u +%H:%M:%S)"
  ./clawrl-$b bench model --model $M --dtype quant --prompt $P --decode 32 --threads 2 2>&1 | grep -E "clawrl|prefill"
  done
done; done
