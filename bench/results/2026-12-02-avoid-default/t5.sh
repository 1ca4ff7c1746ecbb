#!/bin/bash
# french seed 2 under the protocol (1.5B student, its own teacher server, 8 x 16) with serve's defaults on 1bcf821 plus the avoid trio (--rehearsal-avoid --rehearsal-avoid-wrong --rehearsal-avoid-bound=2): is the trio a safe default? (the control arm: t3.sh/t4.sh's, same seed)
nice -n 5 /work/runs/bin-s44b bench learn --model qwen2.5-coder-1.5b --teacher-serve qwen2.5-coder-1.5b \
  --personas french --seeds 1 --first-seed 2 --versions 8 --per-version 16 --eval-prompts 20 --version-timeout 20m \
  --arms "combine:combine:--teacher-url={teacher}:--teacher-model=clawrl" --keep-data \
  --serve-arg=--rehearsal-avoid --serve-arg=--rehearsal-avoid-wrong --serve-arg=--rehearsal-avoid-bound=2 \
  --out /work/runs/s45/target/french-s2-defaults-avoid > /work/runs/s45/target/french-s2-defaults-avoid.log 2>&1
