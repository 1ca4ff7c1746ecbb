#!/bin/bash
# The 1.5B protocol, french seed 3, on serve's defaults with the new binary (AMX tiles on): the run the
# seventieth session made with 3f5a100 (bench/results/2026-12-05-amx/french-s3-amx), repeated.
RUNS='french:3' BIN=/work/runs/clawrl-new OUT=/work/runs/amx bash bench/results/2026-12-05-amx/more.sh
