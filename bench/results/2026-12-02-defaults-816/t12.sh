#!/bin/bash
# tldr seed 1 under the issue's protocol on serve's defaults (bin-s45b = 5748b08's tree: the avoid trio by default and the soft memory limit), against the best setting's 20 at v8
nice -n 5 /work/runs/bin-s45b bench learn --model qwen2.5-coder-1.5b --teacher-serve qwen2.5-coder-1.5b \
  --personas tldr --seeds 1 --first-seed 1 --versions 8 --per-version 16 --eval-prompts 20 --version-timeout 20m \
  --arms "combine:combine:--teacher-url={teacher}:--teacher-model=clawrl" --keep-data \
  --out /work/runs/s46/target/tldr-s1-defaults > /work/runs/s46/target/tldr-s1-defaults.log 2>&1
