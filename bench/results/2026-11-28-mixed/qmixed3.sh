#!/bin/bash
while pgrep -f 'qmixed[12].sh' >/dev/null; do sleep 10; done
R=/work/main/bench/results/2026-11-28-relevance/run.sh
$R /work/runs/bin-mixed2 /work/runs/mx2-french-seed1 1 french --hint-placement=mixed
$R /work/runs/bin-mixed /work/runs/sys-p3-seed2 2 concise,signoff,tldr --hint-placement=system
