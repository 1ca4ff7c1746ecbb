#!/bin/bash
R=/work/main/bench/results/2026-11-28-relevance/run.sh
B=/work/runs/bin-mixed
$R $B /work/runs/mx-french-seed1 1 french --hint-placement=mixed
$R $B /work/runs/mxrel-french-seed1 1 french --hint-placement=mixed --teacher-select-relevance
