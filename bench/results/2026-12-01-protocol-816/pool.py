# pool.py RUN...: held-out satisfaction per round summed over bench learn
# runs (their run.log `evaluated` lines; a held round repeats its
# version's answers), with the Wilson 95 % interval.
import math, re, sys
rounds = {}
for run in sys.argv[1:]:
    for l in open(run + '/run.log'):
        if 'msg=evaluated' not in l:
            continue
        r = int(re.search(r'\bround=(\d+)', l).group(1))
        k = int(re.search(r'\bsatisfied=(\d+)', l).group(1))
        n = int(re.search(r'\basked=(\d+)', l).group(1))
        ret = int(re.search(r'\bretention=(\d+)', l).group(1))
        a = rounds.setdefault(r, [0, 0, 0, 0])
        a[0] += k; a[1] += n; a[2] += ret; a[3] += 1
def wilson(k, n, z=1.96):
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return c - h, c + h
for r in sorted(rounds):
    k, n, ret, runs = rounds[r]
    lo, hi = wilson(k, n)
    print(f'round {r}: {k} of {n} = {k/n:.3f} [{lo:.2f}, {hi:.2f}] over {runs} runs; retention {ret} of {8*runs}')
