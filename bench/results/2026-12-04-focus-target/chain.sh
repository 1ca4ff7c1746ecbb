#!/bin/bash
# after the signoff seed-6 pair: the focused arm alone, against the recorded runs of serve's defaults
cd /work/runs/s59
while pgrep -f "run.sh" >/dev/null; do sleep 10; done
export ARMS="focus1:combine:--teacher-url={teacher}:--teacher-model=clawrl:--distill-focus=1"
P=signoff SEEDS=4 ./run.sh
P=tldr SEEDS=6 ./run.sh
P=french SEEDS=6 ./run.sh
echo chain done $(date +%T)
# then, by hand: ARMS=<the focused arm above> P=signoff SEEDS=5 ./run.sh
