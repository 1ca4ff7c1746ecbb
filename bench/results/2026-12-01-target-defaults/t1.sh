#!/bin/bash
# bench learn --target, one of its eight runs (tldr, seed 2) on 41af12c: does it repeat the recorded d1efb11 run (0,0,13,=13,=13,=13,11,=11,=11)?
nice -n 5 /work/runs/bin-s43b bench learn --target --personas tldr --seeds 1 --first-seed 2 --keep-data \
  --out /work/runs/s43/target/tldr-s2 > /work/runs/s43/target/tldr-s2.log 2>&1
