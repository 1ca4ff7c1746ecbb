#!/bin/bash
# with Evades (the simulated user 👎s an answer that does not answer): french with and without the
# gate's repair step, two seeds, then the other three personas with it (6 x 8 signoff setting)
while pgrep -f "bench learn" >/dev/null; do sleep 20; done
R=/work/main/bench/results/2026-11-28-relevance/run.sh
B=/work/runs/bin-evades
$R $B /work/runs/ev-repair-french-seed1 1 french --gate-repair=2
$R $B /work/runs/ev-main-french-seed1 1 french
$R $B /work/runs/ev-repair-french-seed2 2 french --gate-repair=2
$R $B /work/runs/ev-main-french-seed2 2 french
$R $B /work/runs/ev-repair-3p-seed1 1 signoff,tldr,concise --gate-repair=2
