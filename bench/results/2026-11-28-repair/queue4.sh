#!/bin/bash
# after queue3: french with the hint in the system message only (no repair: against ev-main-french-seed1),
# then the demo model's default grid with Evades (the effect on `clawrl bench learn`)
while pgrep -f "queue3.sh|bench learn" >/dev/null; do sleep 20; done
R=/work/main/bench/results/2026-11-28-relevance/run.sh
B=/work/runs/bin-sys
$R $B /work/runs/ev-sys-french-seed1 1 french --hint-placement=system
mkdir -p /work/runs/ev-smollm2-grid
nice -n 5 $B bench learn --model smollm2 --seeds 2 --keep-data --out /work/runs/ev-smollm2-grid > /work/runs/ev-smollm2-grid/run.log 2>&1
