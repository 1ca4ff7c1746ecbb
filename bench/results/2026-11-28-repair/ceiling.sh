#!/bin/bash
# ceiling.sh BIN OUT: the 1.5B teacher's greedy ceiling on the four personas' held-out prompts, feedback
# in the user's message (user) against the system message only (system), scored with Evades
B=$1; O=$2; mkdir -p $O
$B serve --model qwen2.5-coder-1.5b --method off --addr 127.0.0.1:31821 --data $O/data > $O/serve.log 2>&1 &
SP=$!
for i in $(seq 1 90); do curl -sf http://127.0.0.1:31821/v1/models >/dev/null && break; sleep 2; done
for at in user system; do
  nice -n 5 $B bench teacher --url http://127.0.0.1:31821 --model qwen2.5-coder-1.5b --hint-placement $at --plain=false \
    --concurrency 4 --out $O/$at.json > $O/$at.txt 2>&1
done
kill $SP
