#!/bin/bash
# french seed 2 under the protocol (1.5B student, its own teacher server, 8 x 16) with serve's defaults on 1bcf821 (--gate-backtrack 2 and --hold-liked 0.75 now among them; lr 1e-3, one teacher answer, no avoid trio): against the recorded best-setting run's 0,0,0,18,=18,=18,=18,=18,=18: is the avoid trio needed on french?
nice -n 5 /work/runs/bin-s44b bench learn --model qwen2.5-coder-1.5b --teacher-serve qwen2.5-coder-1.5b \
  --personas french --seeds 1 --first-seed 2 --versions 8 --per-version 16 --eval-prompts 20 --version-timeout 20m \
  --arms "off,combine:combine:--teacher-url={teacher}:--teacher-model=clawrl" --keep-data \
  --out /work/runs/s44/target/french-s2-defaults > /work/runs/s44/target/french-s2-defaults.log 2>&1
