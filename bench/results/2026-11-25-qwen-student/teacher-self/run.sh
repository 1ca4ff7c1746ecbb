#!/bin/bash
# Teacher ceilings of the Qwen2.5-Coder-0.5B student as its own teacher: greedy and best of 4 by the hint gain.
Q=~/.cache/clawrl/models/Qwen2.5-Coder-0.5B-Instruct-AWQ.Q4_K_M.gguf
B=${CLAWRL:-clawrl}
O=${OUT:-teacher-self}
mkdir -p $O
$B serve --model $Q --method off --addr 127.0.0.1:31820 --data $O/data > $O/serve.log 2>&1 &
SP=$!
for i in $(seq 1 60); do curl -sf http://127.0.0.1:31820/v1/models >/dev/null && break; sleep 2; done
time $B bench teacher --url http://127.0.0.1:31820 --model qwen2.5-coder-0.5b --samples 4 --select-threshold -1000 \
  --plain=false --concurrency 4 --gain-model $Q --out $O/greedy.json --samples-out $O/n4.json > $O/teacher.txt 2>&1
kill $SP
