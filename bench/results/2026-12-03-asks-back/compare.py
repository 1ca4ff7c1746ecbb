"""French on serve's defaults with simulated users that no longer like talk that does not answer or asks back
("Bien sûr, je serai ravi de répondre à votre question.", "Bien sûr, je serai ravi de vous aider. Qu'en voulez-vous
savoir sur la lune ?"; bench.Evades at 30c023e): french-sSEED in this folder (seeds 1-2 on bin-s54 = 30c023e, seeds 3-6
on bin-s55 = fd91096, whose users are the same; run.sh), or RUNS, against the same seed's run in the
six-seed pool (../2026-12-02-defaults-816/pool.py --retry --seed3 --rollback-default --seed4 --seeds56
--fit), as recorded and as its held-out answers read with today's check (reread.txt, written by
`go run ./bench/results/2026-11-28-repair/_rescore` on the pool's 24 learn.json files).
Run from this folder:

    python3 compare.py [RUNS]

Then the six-seed pool as today's users score it: concise, signoff and tldr are the pool's runs
(no answer of theirs, rated or held out, changes verdict under the fix, so a rerun is the same
run), french the runs here where there is one (all six since the fifty-fifth session) and otherwise the
pooled run re-read (a composite: that run was trained by users who liked its offers)."""
import json, os, re, sys
here = os.path.dirname(os.path.abspath(__file__))
runs = sys.argv[1] if len(sys.argv) > 1 else here
R = os.path.join(here, '..')
sys.path.insert(0, os.path.join(R, '2026-12-02-defaults-816'))
from pool import pool_runs, wilson  # noqa: E402
POOL = pool_runs(['--retry', '--seed3', '--rollback-default', '--seed4', '--seeds56', '--fit'], R)
sys.path.insert(0, os.path.join(R, '2026-12-03-fit-tldr-french'))
from compare import read, line  # noqa: E402

REREAD = {}  # folder -> (k by round as recorded, k by round re-read), the learning arm's
for l in open(os.path.join(here, 'reread.txt')):
    m = re.match(r'(\S+)/learn\.json combine \w+ seed \d+: ([\d,]+) → ([\d,]+)$', l.strip())
    if m:
        REREAD[m.group(1)] = ([int(x) for x in m.group(2).split(',')], [int(x) for x in m.group(3).split(',')])

def retention(d):
    j = json.load(open(os.path.join(d, 'learn.json')))
    run = next(x for x in j['runs'] if x['method'] != 'off')
    return [(e['retention_right'], e['retention_asked']) for e in run['evals']]

rounds = [[0, 0, 0, 0] for _ in range(9)]  # liked, asked, retention right, retention asked
last = {}  # persona -> liked at v8 over its six seeds
rerun = 0
for persona in ('concise', 'signoff', 'tldr', 'french'):
    for seed in range(1, 7):
        folder = POOL[(persona, seed)]
        reread = REREAD[folder][1]
        d = os.path.join(runs, f'{persona}-s{seed}')
        a = read(d) if persona == 'french' and os.path.exists(os.path.join(d, 'learn.json')) else None
        if a is not None and len(a['sat']) == 9:  # a finished rerun
            b = read(os.path.join(R, folder))
            same = sum(x == y for x, y in zip(a['held_out'], b['held_out']))
            print(f"french seed {seed}: rounds with the pooled run's 20 held-out answers {same} of {len(b['held_out'])}")
            print(f"  today's users  {line(a):40s} v8 {a['sat'][-1]:2d}  r4-8 {sum(a['sat'][4:]):3d}  ret {a['ret']}/8"
                  f"  held {a['held']}  rejected {a['rejected']}")
            print(f"  pool recorded  {line(b):40s} v8 {b['sat'][-1]:2d}  r4-8 {sum(b['sat'][4:]):3d}")
            print(f"  pool re-read   {','.join(map(str, reread)):40s} v8 {reread[-1]:2d}  r4-8 {sum(reread[4:]):3d}")
            ks, ret = a['sat'], retention(d)
            rerun += 1
        else:
            ks, ret = reread, retention(os.path.join(R, folder))
        last[persona] = last.get(persona, 0) + ks[-1]
        for r in range(9):
            rounds[r][0] += ks[r]
            rounds[r][1] += 20
            rounds[r][2] += ret[r][0]
            rounds[r][3] += ret[r][1]
rest = ', the rest re-read' if rerun < 6 else ''
print(f"\nthe six-seed pool as today's users score it (french: {rerun} of 6 seeds rerun{rest}):")
for r, (k, n, ret, rn) in enumerate(rounds):
    lo, hi = wilson(k, n)
    print(f"round {r}: {k}/{n} = {k/n:.2f} [{lo:.2f}, {hi:.2f}]  retention {ret}/{rn}")
print('at v8 by persona: ' + ', '.join(f'{p} {k}/120' for p, k in last.items()))
