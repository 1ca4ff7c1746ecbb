#!/bin/bash
# concise seeds 1 and 2 under the protocol (1.5B student, its own teacher server, 8 x 16) on serve's defaults after 8aed1e3 (bin-s45a), against --target's 2,20,=20,... and 20 at v8
for s in 1 2; do
nice -n 5 /work/runs/bin-s45a bench learn --model qwen2.5-coder-1.5b --teacher-serve qwen2.5-coder-1.5b \
  --personas concise --seeds 1 --first-seed $s --versions 8 --per-version 16 --eval-prompts 20 --version-timeout 20m \
  --arms "combine:combine:--teacher-url={teacher}:--teacher-model=clawrl" --keep-data \
  --out /work/runs/s45/target/concise-s$s-defaults > /work/runs/s45/target/concise-s$s-defaults.log 2>&1
done
