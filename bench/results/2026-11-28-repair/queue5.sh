#!/bin/bash
# after queue4: french with the hint in the system message only, seed 2
while pgrep -f "queue4.sh|bench learn" >/dev/null; do sleep 20; done
/work/main/bench/results/2026-11-28-relevance/run.sh /work/runs/bin-sys /work/runs/ev-sys-french-seed2 2 french --hint-placement=system
