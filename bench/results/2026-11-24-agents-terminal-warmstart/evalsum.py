# Summarise `agent eval --json` files: success with a Wilson 95 % interval,
# the same per task family (first word of the prompt), and two-sided
# Fisher exact p against the first file.
#   python3 evalsum.py TASKS.jsonl A.json B.json ...
import json, sys
from math import comb, sqrt

def wilson(s, n, z=1.959964):
    if n == 0:
        return (0.0, 1.0)
    p = s / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))

def fisher(a, n1, b, n2):
    k = a + b; N = n1 + n2
    p = lambda x: comb(n1, x) * comb(n2, k - x) / comb(N, k)
    p0 = p(a)
    return min(1.0, sum(p(x) for x in range(max(0, k - n2), min(k, n1) + 1) if p(x) <= p0 * (1 + 1e-9)))

tasks = {}
for line in open(sys.argv[1]):
    t = json.loads(line)
    first = t['prompt'].split()[0].rstrip(',').lower()
    tasks[t['id']] = {'in': 'replace', 'make': 'mkdir'}.get(first, first)
base = None
for f in sys.argv[2:]:
    d = json.load(open(f))
    kinds = {}
    for tid, s in d['per_task_success'].items():
        a = kinds.setdefault(tasks[tid], [0, 0]); a[0] += int(s); a[1] += 1
    s, n = d['successes'], d['episodes']
    lo, hi = wilson(s, n)
    line = f"{f}: {s}/{n} = {s/n:.2f} [{lo:.3f}, {hi:.3f}] reward {d['mean_reward']:+.3f}"
    if base:
        line += f" | p vs first {fisher(s, n, *base):.3g}"
    else:
        base = (s, n)
    print(line)
    for k, (ks, kn) in sorted(kinds.items()):
        klo, khi = wilson(ks, kn)
        print(f"    {k:8s} {ks:2d}/{kn:2d} [{klo:.2f}, {khi:.2f}]")
