#!/bin/bash
# signoff seed 1 under the issue's protocol (1.5B student, its own teacher server, 8 x 16) on serve's defaults after 8aed1e3 (bin-s45a: --gate-backtrack 2, --hold-liked 0.75, the avoid trio; lr 1e-3, one teacher answer, no teacher-side selection): against --target's best setting's 0,0,4,8,11,=11,10,=10,=10 (the control: the recorded runs', same seed)
nice -n 5 /work/runs/bin-s45a bench learn --model qwen2.5-coder-1.5b --teacher-serve qwen2.5-coder-1.5b \
  --personas signoff --seeds 1 --first-seed 1 --versions 8 --per-version 16 --eval-prompts 20 --version-timeout 20m \
  --arms "combine:combine:--teacher-url={teacher}:--teacher-model=clawrl" --keep-data \
  --out /work/runs/s45/target/signoff-s1-defaults > /work/runs/s45/target/signoff-s1-defaults.log 2>&1
