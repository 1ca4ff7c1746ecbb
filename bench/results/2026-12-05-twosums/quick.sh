#!/bin/bash
# --quick twice on the new binary (two partial sums per block)
M=$HOME/.cache/clawrl/models/SmolLM2-135M-Instruct.Q4_1.gguf
for name in new1 new2; do
  /usr/bin/time -v ./clawrl-new bench learn --model $M --quick --out q-$name > q-$name.log 2>&1
  echo "$name rc=$?"
done
