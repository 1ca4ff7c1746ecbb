"""Would a rollback on the users' own ratings have fired, and where? For every
stored training arm under bench/results: liked/rated main turns per serving
version, the held-out score of each version (learn.json beside it), and the
versions whose rated turns were liked significantly less often than the
served version's before them (one-sided Fisher exact test, p < ALPHA).

    python3 drops.py [ALPHA] [MIN_DROP]     (from bench/results)
"""
import glob, json, math, os, sqlite3, sys

ALPHA = float(sys.argv[1]) if len(sys.argv) > 1 else 0.01
MIN_DROP = float(sys.argv[2]) if len(sys.argv) > 2 else 0.3


def fisher_less(a, n1, b, n2):
    """P(X <= a) for X the liked count of the first group, margins fixed."""
    k, n = a + b, n1 + n2
    def pmf(x):
        return math.comb(n1, x) * math.comb(n2, k - x) / math.comb(n, k)
    return sum(pmf(x) for x in range(max(0, k - n2), a + 1))


fired = total = 0
for db in sorted(glob.glob('**/data-*/clawrl.db', recursive=True)):
    d = os.path.basename(os.path.dirname(db))
    if 'teacher-server' in d or '-off-' in d:
        continue
    c = sqlite3.connect(db)
    try:
        rows = c.execute("""SELECT policy_version, SUM(feedback_rating=1), SUM(feedback_rating IS NOT NULL AND feedback_rating!=0)
            FROM turns WHERE type='main' GROUP BY policy_version ORDER BY policy_version""").fetchall()
    except sqlite3.Error:
        continue
    run = os.path.dirname(os.path.dirname(db))
    sat = {}
    lj = os.path.join(run, 'learn.json')
    parts = d.split('-')
    persona, seed = parts[-2], parts[-1]
    if os.path.exists(lj):
        for r in json.load(open(lj)).get('runs', []):
            if r['arm'] != 'off' and r['persona'] == persona and str(r['seed']) == seed:
                for e in r['evals']:
                    sat[e['policy_version']] = e['satisfied']
    total += 1
    seq = [(v, l or 0, n or 0) for v, l, n in rows if n]
    line = ' '.join(f"v{v}:{l}/{n}" + (f"({sat[v]})" if v in sat else '') for v, l, n in seq)
    flags = []
    for (v0, l0, n0), (v1, l1, n1) in zip(seq, seq[1:]):
        if n0 and n1 and l0 / n0 - l1 / n1 >= MIN_DROP:
            p = fisher_less(l1, n1, l0, n0)
            if p < ALPHA:
                flags.append(f"v{v1} ({l1}/{n1} after {l0}/{n0}, p={p:.1e}; held-out {sat.get(v0, '?')} -> {sat.get(v1, '?')})")
    if flags:
        fired += 1
    print(f"{run}/{d}: {line}")
    for f in flags:
        print("    ROLLBACK", f)
print(f"{fired} of {total} arms would roll back at least once (alpha {ALPHA}, drop >= {MIN_DROP})")
