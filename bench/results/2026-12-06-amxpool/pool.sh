#!/bin/bash
# The six-seed pool on serve's defaults (the Combined row, as ../2026-12-04-summary-once/reread.py
# puts it together: recorded on a Zen 4) against the same persona-seeds run on this Xeon with its
# AMX tiles on (../2026-12-05-amx/*-amx and the runs here), through `clawrl bench compare --rescore`
# (both sides read with today's simulated users). Run from the repository root:
#
#   CLAWRL=clawrl bash bench/results/2026-12-06-amxpool/pool.sh
set -e
CLAWRL=${CLAWRL:-go run ./cmd/clawrl}
R=$PWD/bench/results
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
python3 - "$R" "$T/zen4" <<'PY'
import os, sys
R, out = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(R, '2026-12-02-defaults-816'))
from pool import pool_runs
P = pool_runs(['--retry', '--seed3', '--rollback-default', '--seed4', '--seeds56', '--fit'], R)
for s in range(1, 7):
    P[('french', s)] = f'2026-12-03-asks-back/french-s{s}'
for s in (3, 5, 6):
    P[('tldr', s)] = f'2026-12-04-summary-once/tldr-s{s}-defaults'
for (p, s), f in P.items():
    d = os.path.join(out, f'{p}-s{s}')
    os.makedirs(d)
    os.symlink(os.path.join(R, f, 'learn.json'), os.path.join(d, 'learn.json'))
PY
mkdir "$T/amx"
for d in "$R"/2026-12-05-amx/*-amx "$R"/2026-12-06-amxpool/*-amx; do
  [ -f "$d/learn.json" ] && mkdir "$T/amx/$(basename "$d")" && ln -s "$d/learn.json" "$T/amx/$(basename "$d")/learn.json"
done
$CLAWRL bench compare --rescore "$T/zen4" "$T/amx"
