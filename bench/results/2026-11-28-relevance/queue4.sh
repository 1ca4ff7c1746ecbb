#!/bin/bash
# after queue3: concise seed 1 with the rehearsal anchors at half weight (the fall back after v3)
while pgrep -f "queue3.sh" >/dev/null; do sleep 5; done
D=/work/main/bench/results/2026-11-28-relevance
bash $D/run.sh /work/runs/bin-relevance2 /work/runs/rehw05-concise-seed1 1 concise --rehearsal-weight=0.5
