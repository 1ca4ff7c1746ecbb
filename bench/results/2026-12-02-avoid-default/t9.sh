#!/bin/bash
# signoff seed 1 under the protocol on serve's defaults, again, on bin-s45b (the working tree after 355e5aa: every clawrl process sets the Go runtime's soft memory limit to 3/4 of the machine's memory): t7.sh's run on bin-s45a was killed by the kernel's OOM killer at its round-5 step (the student server at 22.4 GB resident on this 24 GB box); the same run should repeat rounds 0-4 answer for answer and, with the limit, finish
nice -n 5 /work/runs/bin-s45b bench learn --model qwen2.5-coder-1.5b --teacher-serve qwen2.5-coder-1.5b \
  --personas signoff --seeds 1 --first-seed 1 --versions 8 --per-version 16 --eval-prompts 20 --version-timeout 20m \
  --arms "combine:combine:--teacher-url={teacher}:--teacher-model=clawrl" --keep-data \
  --out /work/runs/s45/target/signoff-s1-defaults-memlimit > /work/runs/s45/target/signoff-s1-defaults-memlimit.log 2>&1
