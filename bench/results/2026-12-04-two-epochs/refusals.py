"""Held-out answers that refuse or evade ("I'm sorry, but I can't assist with that.", "As an AI
developed by Alibaba Cloud, ...") by round, in the six-seed pool on serve's defaults (the Combined
row, with this session's and the last session's runs in place where they were run under today's
users) and in this session's runs: --ppo-epochs 2 (at serve's lr, and at half of it) and
--gate-answers. Each cell is liked/refused of 20.
Run from the repository root:

    python3 bench/results/2026-12-04-two-epochs/refusals.py
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
ARMS = {'epochs2': {}, 'halves': {}, 'answers': {}}
here = os.path.dirname(os.path.abspath(__file__))
for d in sorted(os.listdir(here)):
    m = re.fullmatch(r'([a-z]+)-s(\d)-([a-z0-9]+)', d)
    if m and m.group(3) in ARMS and os.path.exists(os.path.join(here, d, 'learn.json')):
        ARMS[m.group(3)][(m.group(1), int(m.group(2)))] = os.path.relpath(os.path.join(here, d), R)


def rows(folder, persona, seed, arms):
    d = json.load(open(os.path.join(R, folder, 'learn.json')))
    for r in d['runs']:
        if r['arm'] in arms and r['persona'] == persona and r['seed'] == seed:
            return [(ev['satisfied'], sum(bool(REFUSAL.search(h['text'])) for h in ev['held_out']))
                    for ev in r['evals']]
    return None


def show(name, runs, arms):
    print(name)
    tot = {}
    for (p, s), v in sorted(runs.items()):
        rs = rows(v, p, s, arms)
        if rs is None:
            continue
        print(f"  {p:8s} {s}  " + ' '.join(f"{a:2d}/{b:<2d}" for a, b in rs))
        for k, (a, b) in enumerate(rs):
            t = tot.setdefault(p, {}).setdefault(k, [0, 0, 0])
            t[0] += a; t[1] += b; t[2] += 20
    for p, t in tot.items():
        print(f"  {p:8s} sum " + ' '.join(f"{t[k][0]}/{t[k][1]} of {t[k][2]}" for k in sorted(t)))


show("serve's defaults (the pool), liked/refused of 20 by round 0-8", POOL, {'combine'})
show("--ppo-epochs 2 (this session), liked/refused of 20 by round 0-8", ARMS['epochs2'], {'epochs2'})
show("--ppo-epochs 2 --lr 5e-4 (this session), liked/refused of 20 by round 0-8", ARMS['halves'], {'halves'})
show("--gate-answers (this session, to v4), liked/refused of 20 by round 0-4", ARMS['answers'], {'answers'})
