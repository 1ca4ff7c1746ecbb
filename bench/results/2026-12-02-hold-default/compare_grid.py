#!/usr/bin/env python3
"""Per persona and seed, the learning arm of two bench learn grids (learn.json in each folder): held-out liked per round, holds, and whether the rounds' answers are identical."""
import json, sys
def runs(folder):
    r = json.load(open(folder + "/learn.json"))
    return {(x["persona"], x["seed"]): x for x in r["runs"] if x["method"] != "off"}
a, b = runs(sys.argv[1]), runs(sys.argv[2])
for k in sorted(a):
    if k not in b: continue
    ra, rb = a[k]["evals"], b[k]["evals"]
    fa = ",".join(("=" if e.get("held") else "") + str(e["satisfied"]) for e in ra)
    fb = ",".join(("=" if e.get("held") else "") + str(e["satisfied"]) for e in rb)
    same = [all(x.get(f) == y.get(f) for f in ("answers", "train_answers")) for x, y in zip(ra, rb)]
    first = next((i for i, s in enumerate(same) if not s), None)
    print(f"{k[0]:8} seed {k[1]}: {fa:16} vs {fb:16} answers {'identical' if first is None else 'identical to round %d' % (first - 1) if first else 'differ from round 0'}")
