#!/bin/bash
# after queue4: concise seed 1 with --opd-response both (a disliked answer keeps its reward term beside the teacher's answer)
while pgrep -f "queue4.sh" >/dev/null; do sleep 5; done
D=/work/main/bench/results/2026-11-28-relevance
bash $D/run.sh /work/runs/bin-relevance2 /work/runs/both-concise-seed1 1 concise --opd-response=both
