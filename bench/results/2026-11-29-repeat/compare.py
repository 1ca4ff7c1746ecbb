#!/usr/bin/env python3
"""compare.py A/learn.json B/learn.json [PERSONA [ARM]]: two runs of one arm, persona and seed,
round by round: the served version, whether the round's step was rejected,
held-out k/20 (as recorded), and how many of the round's held-out and rated
(train) answers are word for word the same in both runs; the first round
where they part is where the runs diverged."""
import json, sys

def run(path):
    rs = json.load(open(path))["runs"]
    if len(sys.argv) > 3:
        rs = [r for r in rs if r["persona"] == sys.argv[3]]
    if len(sys.argv) > 4:
        rs = [r for r in rs if r["arm"] == sys.argv[4]]
    assert len(rs) == 1, (path, [r["persona"] for r in rs])
    return rs[0]

a, b = run(sys.argv[1]), run(sys.argv[2])
print(f"{'round':>5} {'v A/B':>7} {'rej A/B':>9} {'k/20 A/B':>9} {'held-out same':>14} {'rated same':>11}")
for ea, eb in zip(a["evals"], b["evals"]):
    ha = [x["text"] for x in ea["held_out"]]
    hb = [x["text"] for x in eb["held_out"]]
    ta, tb = ea.get("train_answers") or [], eb.get("train_answers") or []
    same_h = sum(x == y for x, y in zip(ha, hb))
    same_t = sum(x == y for x, y in zip(ta, tb))
    print(f"{ea['round']:>5} {ea['policy_version']:>3}/{eb['policy_version']:<3} {str(bool(ea.get('rejected'))):>4}/{str(bool(eb.get('rejected'))):<4}"
          f" {ea['satisfied']:>4}/{eb['satisfied']:<4} {same_h:>7}/{len(ha):<6} {same_t:>5}/{max(len(ta), len(tb)):<5}")
