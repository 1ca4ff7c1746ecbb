"""Re-read with today's users (../2026-11-28-repair/_rescore: the checks as they are now, the
stutter of 9c32d91 and the second TL;DR of this session) the six-seed pool on serve's defaults
(the Combined row), then with this session's tldr seeds 3, 5 and 6 (run under today's users) in place of
the pool's, and --distill-focus 1 against the pool (../2026-12-04-focus-target), summed by round.
Run from the repository root:

    python3 bench/results/2026-12-04-summary-once/reread.py
"""
import os, re, subprocess, sys
R = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
sys.path.insert(0, os.path.join(R, '2026-12-02-defaults-816'))
from pool import pool_runs  # noqa: E402

POOL = pool_runs(['--retry', '--seed3', '--rollback-default', '--seed4', '--seeds56', '--fit'], R)
for s in range(1, 7):  # french under today's users (../2026-12-03-asks-back)
    POOL[('french', s)] = f'2026-12-03-asks-back/french-s{s}'
FOCUS = {}
ft = os.path.join(R, '2026-12-04-focus-target')
for d in sorted(os.listdir(ft)):
    m = re.fullmatch(r'([a-z]+)-s(\d)', d)
    if m and os.path.exists(os.path.join(ft, d, 'learn.json')):
        FOCUS[(m.group(1), int(m.group(2)))] = f'2026-12-04-focus-target/{d}'

files = sorted({os.path.join(R, v, 'learn.json') for v in list(POOL.values()) + list(FOCUS.values())})
out = subprocess.run(['go', 'run', './bench/results/2026-11-28-repair/_rescore'] + files,
                     capture_output=True, text=True, check=True).stdout
runs = {}  # (folder, arm, persona, seed) -> (recorded, now)
for line in out.splitlines():
    m = re.match(r'(\S+)/learn\.json (\S+) (\w+) seed (\d): ([\d,]+) → ([\d,]+)', line)
    if m:
        folder = os.path.relpath(m.group(1), R)
        runs[(folder, m.group(2), m.group(3), int(m.group(4)))] = (
            [int(x) for x in m.group(5).split(',')], [int(x) for x in m.group(6).split(',')])


def get(folder, persona, seed, arms):
    for arm in arms:
        r = runs.get((folder, arm, persona, seed))
        if r:
            return r
    return None


def total(rows, i):
    return [sum(r[i][k] for r in rows) for k in range(9)]


pool = [get(v, p, s, ['combine']) for (p, s), v in sorted(POOL.items())]
print(f"six-seed pool, {len(pool)} runs, held-out answers liked of {20 * len(pool)} by round 0-8")
print("  as recorded ", total(pool, 0))
print("  re-read     ", total(pool, 1))
for persona in ('concise', 'signoff', 'tldr', 'french'):
    rows = [get(v, p, s, ['combine']) for (p, s), v in sorted(POOL.items()) if p == persona]
    print(f"  {persona:8s} at v8: {sum(r[1][8] for r in rows)} of {20 * len(rows)} re-read ({sum(r[0][8] for r in rows)} recorded)")
# this session's tldr seeds 3, 5 and 6, run under today's users, in place of the pool's
NEW = {('tldr', s): f'2026-12-04-summary-once/tldr-s{s}-defaults' for s in (3, 5, 6)}
extra = subprocess.run(['go', 'run', './bench/results/2026-11-28-repair/_rescore'] +
                       [os.path.join(R, v, 'learn.json') for v in NEW.values()], capture_output=True, text=True, check=True).stdout
for line in extra.splitlines():
    m = re.match(r'(\S+)/learn\.json (\S+) (\w+) seed (\d): ([\d,]+) → ([\d,]+)', line)
    if m:
        runs[(os.path.relpath(m.group(1), R), m.group(2), m.group(3), int(m.group(4)))] = (
            [int(x) for x in m.group(5).split(',')], [int(x) for x in m.group(6).split(',')])
mixed = {**POOL, **NEW}
rows = [get(v, p, s, ['combine']) for (p, s), v in sorted(mixed.items())]
print(f"with tldr seeds 3, 5 and 6 run under today's users: by round 0-8 {total(rows, 1)} of {20 * len(rows)}")
for persona in ('concise', 'signoff', 'tldr', 'french'):
    pr = [get(v, p, s, ['combine']) for (p, s), v in sorted(mixed.items()) if p == persona]
    print(f"  {persona:8s} at v8: {sum(r[1][8] for r in pr)} of {20 * len(pr)}")
print()
pairs = [(k, get(FOCUS[k], *k, ['focus1']), get(POOL[k], *k, ['combine'])) for k in sorted(FOCUS)]
pairs = [(k, f, p) for k, f, p in pairs if f and p and len(f[1]) == 9]
print(f"--distill-focus 1 against the pool, {len(pairs)} persona-seeds of ../2026-12-04-focus-target, re-read, k of {20 * len(pairs)}")
ahead = [0, 0, 0]
for k, f, p in pairs:
    a, b = sum(f[1][1:]), sum(p[1][1:])
    ahead[0 if a > b else 1 if a == b else 2] += 1
    print(f"  {k[0]:8s} {k[1]}  focus {','.join(map(str, f[1])):30s} pool {','.join(map(str, p[1])):30s} r1-8 {a} against {b}")
for rnd in range(9):
    print(f"  round {rnd}: {sum(f[1][rnd] for _, f, _ in pairs)} against {sum(p[1][rnd] for _, _, p in pairs)}")
print(f"  rounds 1-8: {sum(sum(f[1][1:]) for _, f, _ in pairs)} against {sum(sum(p[1][1:]) for _, _, p in pairs)}; ahead {ahead[0]}, level {ahead[1]}, behind {ahead[2]}")
