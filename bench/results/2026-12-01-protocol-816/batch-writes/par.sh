#!/bin/bash
# the teacher server as bench learn starts it (method off), alone on the box
B=/work/runs/bin-s41c
D=$(mktemp -d)
$B serve --data $D --addr 127.0.0.1:38999 --method off --model qwen2.5-coder-1.5b > /work/runs/s41/par/serve.log 2>&1 &
P=$!
for i in $(seq 120); do curl -s 127.0.0.1:38999/healthz >/dev/null && break; sleep 2; done
python3 /work/runs/s41/par/par.py http://127.0.0.1:38999
kill $P; wait $P; rm -rf $D
