"""The rollback rule read from learn.json alone (runs kept without their stores):
the users of each served version are the rounds' rated training turns (train_rated,
train_satisfied) of the rounds it served (the version evaluated before the round).
Prints where --rollback-drop DROP at alpha ALPHA would first have fired.

    python3 usersjson.py DROP ALPHA learn.json...
"""
import json, sys
from math import comb


def fisher_greater(a, n, b, m):
    k, total = a + b, n + m
    return sum(comb(n, x) * comb(m, k - x) / comb(total, k) for x in range(a, min(n, k) + 1) if k - x <= m)


drop, alpha = float(sys.argv[1]), float(sys.argv[2])
for f in sys.argv[3:]:
    fired = 0
    for r in json.load(open(f))["runs"]:
        if r["method"] == "off":
            continue
        ev, users = r["evals"], {}
        for before, e in zip(ev, ev[1:]):
            u = users.setdefault(before["policy_version"], [0, 0])
            u[0] += e.get("train_satisfied", 0)
            u[1] += e.get("train_rated", 0)
        vs = sorted(users)
        for v0, v1 in zip(vs, vs[1:]):
            (l0, n0), (l1, n1) = users[v0], users[v1]
            if n0 and n1 and l0 / n0 - l1 / n1 >= drop and fisher_greater(l0, n0, l1, n1) < alpha:
                fired += 1
                print(f"{f}: {r['persona']} seed {r['seed']}: v{v1}'s users {l1} of {n1} after v{v0}'s {l0} of {n0}")
    print(f"{f}: fired {fired}")
