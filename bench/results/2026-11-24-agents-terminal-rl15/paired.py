# Paired comparison of two `agent eval --json` files on the same tasks:
# the tasks each policy alone solves, and McNemar's exact test (two-sided
# binomial on the discordant tasks), next to Fisher's exact test on the totals.
import json, sys
from math import comb
def fisher(a, n1, b, n2):
    k = a + b; N = n1 + n2
    p = lambda x: comb(n1, x) * comb(n2, k - x) / comb(N, k)
    p0 = p(a)
    return min(1.0, sum(p(x) for x in range(max(0, k - n2), min(k, n1) + 1) if p(x) <= p0 * (1 + 1e-9)))
def mcnemar(b, c):
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    return min(1.0, 2 * sum(comb(n, i) for i in range(k + 1)) / 2 ** n)
tasks = {json.loads(l)['id']: json.loads(l)['prompt'].split()[0] for l in open(sys.argv[1])}
A = json.load(open(sys.argv[2])); B = json.load(open(sys.argv[3]))
a, b = A['per_task_success'], B['per_task_success']
only_a = sorted(t for t in a if a[t] and not b[t]); only_b = sorted(t for t in b if b[t] and not a[t])
print(f"{sys.argv[2]}: {A['successes']}/{A['episodes']}  {sys.argv[3]}: {B['successes']}/{B['episodes']}")
print(f"  solved only by the first: {len(only_a)} {[(t[-4:], tasks[t]) for t in only_a]}")
print(f"  solved only by the second: {len(only_b)} {[(t[-4:], tasks[t]) for t in only_b]}")
print(f"  McNemar exact p = {mcnemar(len(only_a), len(only_b)):.3g}; Fisher p = {fisher(A['successes'], A['episodes'], B['successes'], B['episodes']):.3g}")
