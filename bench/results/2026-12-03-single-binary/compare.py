"""serve's defaults at a644339 (bin-s52, run.sh and run2.sh; run3.sh's french seeds 1-5 on bin-s53 = ab4b3eb,
whose Go code is a644339's, so they print under that name), PERSONA-sSEED in this folder or RUNS, against
the same seed's run in the six-seed pool on serve's defaults (../2026-12-02-defaults-816/pool.py
--retry --seed3 --rollback-default --seed4 --seeds56 --fit), which were made on older binaries.
Run from this folder:

    python3 compare.py [RUNS]

Per run: held-out k/20 by round ('=': the version served did not change), at v8 and over rounds
4-8; the turns the fit retry wrote again; held steps; rejected versions; and how many rounds
gave the same 20 held-out answers as the pooled run, word for word."""
import os, sys
here = os.path.dirname(os.path.abspath(__file__))
runs = sys.argv[1] if len(sys.argv) > 1 else here
R = os.path.join(here, '..')
# The pool's runs, (persona, seed) -> folder, as pool.py reads them for the six-seed figure.
sys.path.insert(0, os.path.join(R, '2026-12-02-defaults-816'))
from pool import pool_runs  # noqa: E402
POOL = pool_runs(['--retry', '--seed3', '--rollback-default', '--seed4', '--seeds56', '--fit'], R)

# read(): a run's held-out answers, k per round, versions, retention and the loop's log counts
# (fit retries, held steps, rejected versions); line(): k by round with '=' for a version unchanged.
sys.path.insert(0, os.path.join(R, '2026-12-03-fit-tldr-french'))
from compare import read, line  # noqa: E402

tot = {'new': [0, 0], 'pool': [0, 0]}
for persona in ('tldr', 'signoff', 'concise', 'french'):
    for seed in range(1, 7):
        d = os.path.join(runs, f'{persona}-s{seed}')
        if not os.path.exists(os.path.join(d, 'learn.json')):
            continue
        a, b = read(d), read(os.path.join(R, POOL[(persona, seed)]))
        same = sum(x == y for x, y in zip(a['held_out'], b['held_out']))
        for k, r in (('new', a), ('pool', b)):
            tot[k][0] += r['sat'][-1]
            tot[k][1] += sum(r['sat'][4:])
        print(f"{persona} seed {seed}: rounds with the same 20 answers {same} of {len(b['held_out'])}")
        print(f"  a644339  {line(a):40s} v8 {a['sat'][-1]:2d}  r4-8 {sum(a['sat'][4:]):3d}  ret {a['ret']}/8"
              f"  fit retries {a['fit']}  held {a['held']}  rejected {a['rejected']}")
        print(f"  pool     {line(b):40s} v8 {b['sat'][-1]:2d}  r4-8 {sum(b['sat'][4:]):3d}  ret {b['ret']}/8"
              f"  fit retries {b['fit']}  held {b['held']}  rejected {b['rejected']}")
print(f"total: v8 {tot['new'][0]} against the pool's {tot['pool'][0]}; rounds 4-8 {tot['new'][1]} against {tot['pool'][1]}")
