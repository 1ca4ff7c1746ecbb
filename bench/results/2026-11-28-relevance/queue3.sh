#!/bin/bash
# after queue2: the other three personas with --teacher-select-relevance (seed 1), for harm
while pgrep -f "queue2.sh" >/dev/null; do sleep 5; done
D=/work/main/bench/results/2026-11-28-relevance
bash $D/run.sh /work/runs/bin-relevance2 /work/runs/rel2-others-seed1 1 concise,tldr,signoff --teacher-select-relevance --log-level=debug
