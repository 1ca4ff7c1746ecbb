#!/bin/bash
# after the first repair run: the teacher's ceiling by hint placement, then french with Evades,
# with and without the gate's repair step (6 x 8 signoff setting)
while pgrep -f "bench learn" >/dev/null; do sleep 20; done
D=/work/main/bench/results/2026-11-28-repair
$D/ceiling.sh /work/runs/bin-sys /work/runs/ceiling-1.5b
R=/work/main/bench/results/2026-11-28-relevance/run.sh
B=/work/runs/bin-sys
$R $B /work/runs/ev-repair-french-seed1 1 french --gate-repair=2
$R $B /work/runs/ev-main-french-seed1 1 french
