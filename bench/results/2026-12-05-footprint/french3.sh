#!/bin/bash
# The 1.5B protocol, french seed 3, on serve's defaults with this round's binary (AMX tiles on): the run the
# seventy-first session made with 3ccb99a's kernels (bench/results/2026-12-05-amxint8/french-s3), repeated.
RUNS='french:3' BIN=/work/runs/clawrl-new OUT=/work/runs/fp bash bench/results/2026-12-05-amx/more.sh
