#!/bin/bash
# --teacher-loops LOOPS (refuse, the default here, or cut) on the Combined row's protocol (serve's defaults, 8 versions x 16 rated
# turns), the learning arm only, one persona-seed at a time, named "combine" so that
# `clawrl bench compare --rescore bench/results/combined-pool/P-sS OUT/P-sS` pairs each run with
# the pool's (the runs repeat the pool's answer for answer until the first loop refused). From
# the repository root:
#
#   go build -o /tmp/clawrl ./cmd/clawrl
#   RUNS='french:2 french:6' LOOPS=cut BIN=/tmp/clawrl OUT=/tmp/loops bash bench/results/2026-12-06-unfinished/loops.sh
#
# (The refuse runs kept here were made with --teacher-refuse-loops, the same
# as --teacher-loops refuse.)
# The loop itself is ../2026-12-06-anchors/run.sh's, with --teacher-loops=$LOOPS as its flags.
LOOPS=${LOOPS:-refuse}
RUNS=${RUNS:-french:2 french:6} OUT=${OUT:-loops} ARGS="--teacher-loops=$LOOPS" exec bash "$(dirname "$0")/../2026-12-06-anchors/run.sh"
