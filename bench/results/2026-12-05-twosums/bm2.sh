#!/bin/bash
# clawrl bench model on the demo GGUF (quant-f32), 128 decode tokens, old (e00b119) and new alternating three times, AVX-512 and CLAWRL_AVX512=0
M=$HOME/.cache/clawrl/models/SmolLM2-135M-Instruct.Q4_1.gguf
for i in 1 2 3; do for b in old new; do
  echo "== $b $i $(date -u +%H:%M:%S)"
  ./clawrl-$b bench model --model $M --dtype quant-f32 --decode 128 --threads 2 2>&1 | grep clawrl
  CLAWRL_AVX512=0 ./clawrl-$b bench model --model $M --dtype quant-f32 --decode 128 --threads 2 2>&1 | grep clawrl | sed 's/^/avx2 /'
done; done
