#!/bin/bash
# after queue5: concise seed 1 on the defaults again (how much the fall back varies between runs of one seed)
while pgrep -f "queue5.sh" >/dev/null; do sleep 5; done
D=/work/main/bench/results/2026-11-28-relevance
bash $D/run.sh /work/runs/bin-relevance2 /work/runs/default-concise-seed1 1 concise
