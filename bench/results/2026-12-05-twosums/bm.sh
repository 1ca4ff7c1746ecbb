#!/bin/bash
# clawrl bench model on the demo GGUF (quant-f32), old (e00b119, four partial sums) and new (two) binaries alternating; run from /work/runs
M=$HOME/.cache/clawrl/models/SmolLM2-135M-Instruct.Q4_1.gguf
for i in 1 2; do for b in old new; do
  echo "== $b $i $(date -u +%H:%M:%S)"
  ./clawrl-$b bench model --model $M --dtype quant-f32 --decode 32 --threads 2 2>&1 | tail -6
  CLAWRL_AVX512=0 ./clawrl-$b bench model --model $M --dtype quant-f32 --decode 32 --threads 2 2>&1 | tail -6 | sed 's/^/avx2 /'
done; done
