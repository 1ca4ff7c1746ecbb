#!/bin/bash
# signoff seed 2 under the issue's protocol on serve's defaults (bin-s45b = 5748b08's tree: the avoid trio by default and the soft memory limit), against the best setting's 14 at v8
nice -n 5 /work/runs/bin-s45b bench learn --model qwen2.5-coder-1.5b --teacher-serve qwen2.5-coder-1.5b \
  --personas signoff --seeds 1 --first-seed 2 --versions 8 --per-version 16 --eval-prompts 20 --version-timeout 20m \
  --arms "combine:combine:--teacher-url={teacher}:--teacher-model=clawrl" --keep-data \
  --out /work/runs/s46/target/signoff-s2-defaults > /work/runs/s46/target/signoff-s2-defaults.log 2>&1
