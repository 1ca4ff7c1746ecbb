#!/bin/bash
for pl in user-first user system; do
  nice -n 5 /work/runs/bin-first bench teacher --url http://127.0.0.1:30123 --model qwen2.5-coder-1.5b --hint-placement $pl --plain=false --concurrency 2 --out ceil-$pl.json > ceil-$pl.txt 2>&1
done
