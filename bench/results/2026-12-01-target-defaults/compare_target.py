#!/usr/bin/env python3
"""Round by round, the learning arm of two bench learn runs (learn.json in each folder):
versions, held-out liked, holds, and whether the held-out and training answers are the same."""
import json, sys

def learning(folder):
    r = json.load(open(folder + "/learn.json"))
    return next(x for x in r["runs"] if x["method"] != "off")

a, b = learning(sys.argv[1]), learning(sys.argv[2])
print(f"{a['arm']} {a['persona']} seed {a['seed']}  vs  {b['arm']} {b['persona']} seed {b['seed']}")
for ea, eb in zip(a["evals"], b["evals"]):
    same = all(ea.get(k) == eb.get(k) for k in ("answers", "train_answers"))
    print(f"round {ea['round']}: v{ea['policy_version']} {ea['satisfied']}/20 held={bool(ea.get('held'))}  vs  "
          f"v{eb['policy_version']} {eb['satisfied']}/20 held={bool(eb.get('held'))}; answers {'identical' if same else 'differ'}")
