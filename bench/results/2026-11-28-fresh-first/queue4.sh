#!/bin/bash
# after queue2: the other three personas with 8 rehearsal anchors per step, seed 1 (6 x 8 signoff setting)
while pgrep -f "queue2.sh|bench learn" >/dev/null; do sleep 20; done
/work/main/bench/results/2026-11-28-relevance/run.sh /work/runs/bin-fresh /work/runs/reh8-3p-seed1 1 signoff,tldr,concise --rehearsal=8
