#!/bin/bash
# runs --quick: new, new, old, in turn
M=$HOME/.cache/clawrl/models/SmolLM2-135M-Instruct.Q4_1.gguf
for r in new1:new new2:new old1:old; do
  name=${r%%:*}; bin=${r##*:}
  /usr/bin/time -v ./clawrl-$bin bench learn --model $M --quick --out q-$name > q-$name.log 2>&1
  echo "$name rc=$?"
done
