"""Signoff and tldr on the demo model (SmolLM2-135M-Instruct, Q4_1) over 6 versions of 8 with
Qwen2.5-Coder-1.5B-Instruct (Q4_K_M) as its teacher (--teacher-serve), with --distill-focus 1
and without: seeds 2 and 3 of signoff and seed 1 of tldr from this folder, seed 1 of signoff
from ../2026-12-03-demo-teacher (focus1-signoff6-s1, base-signoff6-s1). Held-out k of 20 by
round 0-6; "=" where the served version did not change (the step rejected by the gate or held).
Run from this folder:

    python3 compare.py
"""
import importlib.util, os
from math import comb
here = os.path.dirname(os.path.abspath(__file__))
prev = os.path.join(here, '..', '2026-12-03-demo-teacher')
spec = importlib.util.spec_from_file_location('demo_teacher', os.path.join(prev, 'compare.py'))
teacher = importlib.util.module_from_spec(spec)
spec.loader.exec_module(teacher)
SOURCES = [(os.path.join(prev, 'focus1-signoff6-s1'), 'focus1'), (os.path.join(prev, 'base-signoff6-s1'), 'combine'),
           (os.path.join(here, 'pair-signoff6-s2'), 'focus1'), (os.path.join(here, 'pair-signoff6-s2'), 'combine'),
           (os.path.join(here, 'pair-signoff6-s3'), 'focus1'), (os.path.join(here, 'pair-signoff6-s3'), 'combine'),
           (os.path.join(here, 'pair-tldr6-s1'), 'focus1'), (os.path.join(here, 'pair-tldr6-s1'), 'combine')]
NAMES = {'focus1': '--distill-focus 1', 'combine': 'without'}


def fisher_greater(a, n1, b, n2):
    """One-sided Fisher exact p that the first proportion a/n1 is above b/n2."""
    k, n = a + b, n1 + n2
    tot = comb(n, k)
    return sum(comb(n1, i) * comb(n2, k - i) for i in range(a, min(k, n1) + 1)) / tot


def report(sources, names, personas, focus='focus1', base='combine'):
    """Prints each run's k of 20 by round, then per persona the arms' last rounds pooled with
    Fisher's p that focus's is above base's."""
    last = {}
    for d, arm in sources:
        for run, ks in teacher.rounds(d, arm):
            e = run['evals'][-1]
            print(f"{run['persona']:8s} seed {run['seed']}  {names[arm]:18s} {','.join(ks):22s} v6 {e['satisfied']:2d}/20"
                  f"  words {e['mean_words']:5.1f}  retention {e['retention_right']}/{e['retention_asked']}")
            last.setdefault((run['persona'], arm), []).append(e['satisfied'])
    print()
    for persona in personas:
        f, b = last.get((persona, focus), []), last.get((persona, base), [])
        if not f or not b:
            continue
        n1, n2 = 20 * len(f), 20 * len(b)
        print(f"{persona} at the last round: {names[focus]} {sum(f)} of {n1}, {names[base]} {sum(b)} of {n2}; "
              f"one-sided Fisher p = {fisher_greater(sum(f), n1, sum(b), n2):.2g}")


if __name__ == '__main__':
    report(SOURCES, NAMES, ('signoff', 'tldr'))
