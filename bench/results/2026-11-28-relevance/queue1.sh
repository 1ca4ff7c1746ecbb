#!/bin/bash
# french with --teacher-select-relevance, seeds 2 and 1
D=/work/main/bench/results/2026-11-28-relevance
bash $D/run.sh /work/runs/bin-relevance /work/runs/rel-french-seed2 2 french --teacher-select-relevance
bash $D/run.sh /work/runs/bin-relevance /work/runs/rel-french-seed1 1 french --teacher-select-relevance
