#!/bin/bash
# ceiling.sh BIN OUT: the 1.5B teacher's greedy ceiling on the four personas, feedback in the user's
# message (user) against after the model's own greedy answer as the user's next message (revise)
B=$1; O=$2; mkdir -p $O
$B serve --model qwen2.5-coder-1.5b --method off --addr 127.0.0.1:31821 --data $O/data > $O/serve.log 2>&1 &
SP=$!
for i in $(seq 1 90); do curl -sf http://127.0.0.1:31821/v1/models >/dev/null && break; sleep 2; done
for at in revise user; do
  s=$(date +%s)
  nice -n 5 $B bench teacher --url http://127.0.0.1:31821 --model qwen2.5-coder-1.5b --hint-placement $at --plain=false \
    --concurrency 4 --out $O/$at.json > $O/$at.txt 2>&1
  echo "$at $(( $(date +%s) - s )) s" >> $O/times.txt
done
kill $SP
