#!/bin/bash
# The six-seed pool on serve's defaults (the Combined row, ../combined-pool: recorded
# on a Zen 4) against the same persona-seeds run on this Xeon with its
# AMX tiles on (../2026-12-05-amx/*-amx and the runs here), through `clawrl bench compare --rescore`
# (both sides read with today's simulated users). Run from the repository root:
#
#   CLAWRL=clawrl bash bench/results/2026-12-06-amxpool/pool.sh
set -e
CLAWRL=${CLAWRL:-go run ./cmd/clawrl}
R=$PWD/bench/results
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
mkdir "$T/amx"
for d in "$R"/2026-12-05-amx/*-amx "$R"/2026-12-06-amxpool/*-amx; do
  [ -f "$d/learn.json" ] && mkdir "$T/amx/$(basename "$d")" && ln -s "$d/learn.json" "$T/amx/$(basename "$d")/learn.json"
done
$CLAWRL bench compare --rescore bench/results/combined-pool "$T/amx"
