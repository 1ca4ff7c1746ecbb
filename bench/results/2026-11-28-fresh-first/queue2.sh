#!/bin/bash
# after queue1: french on the 6 x 8 signoff setting with twice the rehearsal anchors per step (8), seeds 1 and 2
while pgrep -f "bench learn" >/dev/null; do sleep 20; done
R=/work/main/bench/results/2026-11-28-relevance/run.sh
for s in 1 2; do $R /work/runs/bin-fresh /work/runs/reh8-french-seed$s $s french --rehearsal=8; done
