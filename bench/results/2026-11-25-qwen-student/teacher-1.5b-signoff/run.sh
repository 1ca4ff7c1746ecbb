#!/bin/bash
T=~/.cache/clawrl/models/Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf
Q=~/.cache/clawrl/models/Qwen2.5-Coder-0.5B-Instruct-AWQ.Q4_K_M.gguf
B=${CLAWRL:-clawrl}
O=${OUT:-teacher-1.5b}
mkdir -p $O
$B serve --model $T --method off --addr 127.0.0.1:31821 --data $O/data > $O/serve.log 2>&1 &
SP=$!
for i in $(seq 1 90); do curl -sf http://127.0.0.1:31821/v1/models >/dev/null && break; sleep 2; done
time $B bench teacher --url http://127.0.0.1:31821 --model clawrl --personas ${P:-signoff} --samples 4 --select-threshold -1000 \
  --plain=false --concurrency 4 --gain-model $Q --out $O/greedy-${P:-signoff}.json --samples-out $O/n4-${P:-signoff}.json > $O/teacher-${P:-signoff}.txt 2>&1
kill $SP
