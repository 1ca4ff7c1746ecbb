"""Persona-seeds on serve's defaults: the recorded run (Zen 4, VDPBF16PS) and this
session's runs on an AMX Xeon: tldr seed 3 with the tiles off (CLAWRL_AMX=0) and on
(learn.sh), then tldr seed 5 and french seed 1 with them on (more.sh), then signoff seeds 1 and 2
(`RUNS='signoff:1 signoff:2' more.sh`, the sixty-ninth session), then french seed 3
(`RUNS='french:3' more.sh`, the seventieth). Held-out answers liked by round, how many held-out texts equal the recorded
run's, and the seconds from a version's 16th rated turn to its service (wait_s) and the
policy step's time (the server's "trained version" line; a version held or retaken trains again). Run from the repository root:

    python3 bench/results/2026-12-05-amx/compare.py
"""
import json, os, re
here = os.path.dirname(os.path.abspath(__file__))
R = os.path.join(here, '..')
SETS = [('tldr', 3, [('recorded', os.path.join(R, '2026-12-04-summary-once', 'tldr-s3-defaults')),
                      ('CLAWRL_AMX=0', os.path.join(here, 'tldr-s3-noamx')),
                      ('AMX', os.path.join(here, 'tldr-s3-amx'))]),
        ('tldr', 5, [('recorded', os.path.join(R, '2026-12-04-summary-once', 'tldr-s5-defaults')),
                      ('AMX', os.path.join(here, 'tldr-s5-amx'))]),
        ('french', 1, [('recorded', os.path.join(R, '2026-12-03-asks-back', 'french-s1')),
                        ('AMX', os.path.join(here, 'french-s1-amx'))]),
        # RUNS='signoff:1 signoff:2' more.sh (sixty-ninth session)
        ('signoff', 1, [('recorded', os.path.join(R, '2026-12-03-quoted-fit', 'signoff-s1')),
                         ('AMX', os.path.join(here, 'signoff-s1-amx'))]),
        ('signoff', 2, [('recorded', os.path.join(R, '2026-12-03-quoted-fit', 'signoff-s2')),
                         ('AMX', os.path.join(here, 'signoff-s2-amx'))]),
        # RUNS='french:3' more.sh (seventieth session, binary 3f5a100)
        ('french', 3, [('recorded', os.path.join(R, '2026-12-03-asks-back', 'french-s3')),
                        ('AMX', os.path.join(here, 'french-s3-amx'))])]


def evals(folder):
    d = json.load(open(os.path.join(folder, 'learn.json')))
    return next(r['evals'] for r in d['runs'] if r['arm'] == 'combine')


def steps(folder, persona, seed):
    path = os.path.join(folder, f'serve-combine-{persona}-{seed}.log')
    if not os.path.exists(path):
        return []
    out = []
    for m in re.finditer(r'msg="trained version".*? step=([0-9hms.]+)', open(path).read()):
        t, s = 0.0, m.group(1)
        for n, u in re.findall(r'([0-9.]+)(h|ms|m|s)', s):
            t += float(n) * {'h': 3600, 'm': 60, 's': 1, 'ms': 1e-3}[u]
        out.append(t)
    return out


for persona, seed, runs in SETS:
    print(f"{persona} seed {seed}")
    base = evals(runs[0][1])
    for name, folder in runs:
        if not os.path.exists(os.path.join(folder, 'learn.json')):
            print(f'{name}: not run')
            continue
        ev = evals(folder)
        liked = ' '.join(f"{'=' if i and e['policy_version'] == ev[i - 1]['policy_version'] else ''}{e['satisfied']}"
                         for i, e in enumerate(ev))
        same = ' '.join(str(sum(a['text'] == b['text'] for a, b in zip(e['held_out'], f['held_out'])))
                        for e, f in zip(ev, base))
        print(f'{name:13s} liked by round: {liked}')
        print(f'{"":13s} held-out texts equal to the recorded run\'s, of 20: {same}')
        w, s = [e['wait_seconds'] for e in ev[1:]], steps(folder, persona, seed)
        if w:
            print(f'{"":13s} wait_s by round: {" ".join(f"{x:.0f}" for x in w)} (sum {sum(w):.0f})')
        if s:
            print(f'{"":13s} policy steps, s: {" ".join(f"{x:.0f}" for x in s)} (mean {sum(s)/len(s):.1f})')

# Summed over the persona-seeds run with the tiles on: held-out answers liked by round.
tot = {'recorded': [0] * 9, 'AMX': [0] * 9}
n = 0
for persona, seed, runs in SETS:
    d = dict(runs)
    if not os.path.exists(os.path.join(d['AMX'], 'learn.json')):
        continue
    n += 1
    for name in tot:
        for i, e in enumerate(evals(d[name])):
            tot[name][i] += e['satisfied']
print(f'{n} persona-seeds with the tiles on, liked of {20 * n} by round 0-8:')
for name, v in tot.items():
    print(f'{name:13s} {" ".join(map(str, v))} (rounds 1-8: {sum(v[1:])})')
