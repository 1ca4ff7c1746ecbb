#!/bin/bash
# after the filter-only run (bin-relevance, seed 2): min(gain, relevance) ranking, french seeds 2 and 1
while pgrep -f "bin-relevance bench" >/dev/null; do sleep 5; done
D=/work/main/bench/results/2026-11-28-relevance
bash $D/run.sh /work/runs/bin-relevance2 /work/runs/rel2-french-seed2 2 french --teacher-select-relevance --log-level=debug
bash $D/run.sh /work/runs/bin-relevance2 /work/runs/rel2-french-seed1 1 french --teacher-select-relevance --log-level=debug
