"""--first-epochs 2 against serve's defaults, persona-seed by persona-seed: held-out answers liked,
refused or evading ("I'm sorry, but I can't assist with that.", "As an AI ..."), and opening with
"TL;DR" (tldr) by round, each of 20; the pool's run of the same seed beside it (the Combined row,
with today's users' runs in place, as 2026-12-04-two-epochs/refusals.py reads it). Run from the
repository root:

    python3 bench/results/2026-12-05-first-step/first.py
"""
import json, os, re, sys
R = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
sys.path.insert(0, os.path.join(R, '2026-12-02-defaults-816'))
from pool import pool_runs  # noqa: E402

REFUSAL = re.compile(r"^(I'm sorry|I am sorry|Sorry|As an AI\b)|can't assist", re.I)
POOL = pool_runs(['--retry', '--seed3', '--rollback-default', '--seed4', '--seeds56', '--fit'], R)
for s in range(1, 7):
    POOL[('french', s)] = f'2026-12-03-asks-back/french-s{s}'
for s in (3, 5, 6):
    POOL[('tldr', s)] = f'2026-12-04-summary-once/tldr-s{s}-defaults'
here = os.path.dirname(os.path.abspath(__file__))


def rounds(folder, persona, seed, arm):
    d = json.load(open(os.path.join(R, folder, 'learn.json')))
    for r in d['runs']:
        if r['arm'] == arm and r['persona'] == persona and r['seed'] == seed:
            return [(ev['satisfied'], sum(bool(REFUSAL.search(h['text'])) for h in ev['held_out']),
                     sum(h['text'].lstrip().upper().startswith('TL') for h in ev['held_out']))
                    for ev in r['evals']]
    return None


def cells(rs):
    return '  '.join(f"{a:2d}/{b:<2d}/{c:<2d}" for a, b, c in rs) + f"   rounds 1-8: {sum(a for a, _, _ in rs[1:])}"


def accumulate(tot, arm, rs):
    """Adds a run's (liked, refused, opening) by round to tot[arm]."""
    t = tot.setdefault(arm, [[0, 0, 0] for _ in rs])
    for i, x in enumerate(rs):
        for j in range(3):
            t[i][j] += x[j]


def compare(folder, arm, earlier):
    """Prints, for each run P-sS-<arm> in folder, the runs of the same persona-seed that earlier(p, s)
    lists as (name, rounds) and then its own, each as cells, and their sums over those runs."""
    print("liked/refused/opening 'TL' of 20 by round 0-8")
    tot = {}
    for d in sorted(os.listdir(folder)):
        m = re.fullmatch(r'([a-z]+)-s(\d)-' + arm, d)
        if not m or not os.path.exists(os.path.join(folder, d, 'learn.json')):
            continue
        p, s = m.group(1), int(m.group(2))
        print(f"{p} {s}")
        for k, rs in earlier(p, s) + [(arm, rounds(os.path.relpath(os.path.join(folder, d), R), p, s, arm))]:
            print(f"  {k:9s} {cells(rs)}")
            accumulate(tot, k, rs)
    print("summed over the runs above")
    for k, t in tot.items():
        print(f"  {k:9s} {cells(t)}")


def main():
    tot = {}
    print("liked/refused/opening 'TL' of 20 by round 0-8")
    for d in sorted(os.listdir(here)):
        m = re.fullmatch(r'([a-z]+)-s(\d)-([a-z0-9]+)', d)
        if not m or not os.path.exists(os.path.join(here, d, 'learn.json')):
            continue
        p, s, arm = m.group(1), int(m.group(2)), m.group(3)
        if arm != 'first2':
            continue
        mine = rounds(os.path.relpath(os.path.join(here, d), R), p, s, arm)
        pool = rounds(POOL[(p, s)], p, s, 'combine')
        print(f"{p} {s}\n  defaults  {cells(pool)}\n  {arm:9s} {cells(mine)}")
        for k, rs in (('defaults', pool), (arm, mine)):
            accumulate(tot, k, rs)
    print("summed over the runs above")
    for k, t in tot.items():
        print(f"  {k:9s} {cells(t)}")

    print("knock.sh (tldr seed 3: --first-epochs 2 with --rehearsal 0, with --momentum-reset every-step, to v3; --first-epochs 3 to v2), liked/refused/opening 'TL' by round 0-3")
    for arm in ('noanchors', 'reset', 'first3'):
        d = os.path.join(here, f'tldr-s3-{arm}')
        if os.path.exists(os.path.join(d, 'learn.json')):
            print(f"  {arm:9s} {cells(rounds(os.path.relpath(d, R), 'tldr', 3, arm))}")


if __name__ == '__main__':
    main()
