#!/bin/bash
# after queue3: french with the hint in the system message only, with the repair step; then seed 2 of repair and main
while pgrep -f "queue3.sh|bench learn" >/dev/null; do sleep 20; done
R=/work/main/bench/results/2026-11-28-relevance/run.sh
B=/work/runs/bin-sys
$R $B /work/runs/ev-sys-repair-french-seed1 1 french --gate-repair=2 --hint-placement=system
$R $B /work/runs/ev-repair-french-seed2 2 french --gate-repair=2
$R $B /work/runs/ev-main-french-seed2 2 french
