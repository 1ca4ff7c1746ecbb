# Summarise `agent eval --json` files: success, Wilson CI, by prompt kind,
# and two-sided Fisher exact p against the first file.
import json, sys
from math import comb
tasks = {}
for line in open(sys.argv[1]):
    t = json.loads(line)
    tasks[t['id']] = t['prompt'].split()[0]
def fisher(a, n1, b, n2):
    # two-sided: sum of tables at most as likely as the observed one
    k = a + b; N = n1 + n2
    p = lambda x: comb(n1, x) * comb(n2, k - x) / comb(N, k)
    p0 = p(a)
    return min(1.0, sum(p(x) for x in range(max(0, k - n2), min(k, n1) + 1) if p(x) <= p0 * (1 + 1e-9)))
base = None
for f in sys.argv[2:]:
    d = json.load(open(f))
    kinds = {}
    for tid, s in d['per_task_success'].items():
        k = tasks[tid]; a = kinds.setdefault(k, [0, 0]); a[0] += s; a[1] += 1
    s, n = d['successes'], d['episodes']
    line = f"{f}: {s}/{n} = {s/n:.2f} [{d['ci95_low']:.3f}, {d['ci95_high']:.3f}] reward {d['mean_reward']:+.3f} " + \
        ' '.join(f"{k} {int(v[0])}/{v[1]}" for k, v in sorted(kinds.items()))
    if base:
        line += f" | p vs first {fisher(s, n, *base):.3g}"
    else:
        base = (s, n)
    print(line)
