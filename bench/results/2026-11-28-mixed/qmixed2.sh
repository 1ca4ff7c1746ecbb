#!/bin/bash
while pgrep -f qmixed1.sh >/dev/null; do sleep 10; done
R=/work/main/bench/results/2026-11-28-relevance/run.sh
B=/work/runs/bin-mixed
$R $B /work/runs/sys-p3-seed1 1 concise,signoff,tldr --hint-placement=system
