#!/bin/bash
# the gate's repair step (--gate-repair=2, default 4 anchors per step), french then the other three personas, 6 x 8 signoff setting
while pgrep -f "bench learn" >/dev/null; do sleep 20; done
R=/work/main/bench/results/2026-11-28-relevance/run.sh
$R /work/runs/bin-repair /work/runs/repair-french-seed1 1 french --gate-repair=2
$R /work/runs/bin-repair /work/runs/repair-french-seed2 2 french --gate-repair=2
$R /work/runs/bin-repair /work/runs/repair-3p-seed1 1 signoff,tldr,concise --gate-repair=2
