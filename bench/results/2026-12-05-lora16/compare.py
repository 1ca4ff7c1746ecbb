"""tldr seed 3 on serve's defaults: the recorded run (Zen 4, VDPBF16PS), the sixty-seventh
session's runs on the AMX Xeon with the tiles off and on (its kernels), and this round's
(learn.sh: the new LoRA and forward kernels, tiles off; more.sh: tiles on). Held-out answers
liked by round and how many held-out texts equal the first run of each group's. Run from the
repository root:

    python3 bench/results/2026-12-05-lora16/compare.py
"""
import json, os
here = os.path.dirname(os.path.abspath(__file__))
R = os.path.join(here, '..')
PAIRS = [[('recorded', os.path.join(R, '2026-12-04-summary-once', 'tldr-s3-defaults')),
          ('67th, AMX=0', os.path.join(R, '2026-12-05-amx', 'tldr-s3-noamx')),
          ('this, AMX=0', os.path.join(here, 'tldr-s3-noamx'))],
         [('67th, AMX', os.path.join(R, '2026-12-05-amx', 'tldr-s3-amx')),
          ('this, AMX', os.path.join(here, 'tldr-s3-amx'))]]


def evals(folder):
    d = json.load(open(os.path.join(folder, 'learn.json')))
    return next(r['evals'] for r in d['runs'] if r['arm'] == 'combine')


for RUNS in PAIRS:
    base = evals(RUNS[0][1])
    for name, folder in RUNS:
        if not os.path.exists(os.path.join(folder, 'learn.json')):
            print(f'{name}: not run')
            continue
        ev = evals(folder)
        liked = ' '.join(f"{'=' if i and e['policy_version'] == ev[i - 1]['policy_version'] else ''}{e['satisfied']}"
                         for i, e in enumerate(ev))
        same = ' '.join(str(sum(a['text'] == b['text'] for a, b in zip(e['held_out'], f['held_out'])))
                        for e, f in zip(ev, base))
        print(f'{name:12s} liked by round: {liked}')
        print(f'{"":12s} held-out texts equal to {RUNS[0][0]}\'s, of 20: {same}')
