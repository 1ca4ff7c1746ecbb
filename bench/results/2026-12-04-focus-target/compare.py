"""--distill-focus 1 (with the unfocused retake) on the issue's protocol on serve's defaults
(Qwen2.5-Coder-1.5B-Instruct Q4_K_M as the student and, through --teacher-serve, its own
teacher; 8 versions of 16 rated turns), the focused arm (focus1) of each PERSONA-sSEED folder
here against the same persona and seed in the six-seed pool (../2026-12-03-asks-back/compare.py:
the pool's runs, french the runs under today's users), and against this folder's own combine arm
where it has one (signoff-s6: run again on this binary, stopped after round 4, to show the pool's
run repeats). Held-out k of 20 by round 0-8 ("=" where the served version did not change), then
the held-out answers liked summed over rounds 1-8 (of 160) and the run's seconds (this box ran
about 1.7 times slower than the pool's days: the pool's signoff seed 6 reached round 4 in 609 s,
its rerun here in 1103 s). Then, over every persona-seed here: k at v8 by persona, k by round,
and a one-sided sign test on the rounds 1-8 sums with the run as the unit.
Figures as recorded: re-read with the stutter check of 9c32d91 (../2026-11-28-repair/_rescore) in
BENCHMARKS.md, "A word that stutters is a loop"; s61b/ holds two runs on that binary, not read here.
Run from this folder:

    python3 compare.py
"""
import importlib.util, math, os, sys
here = os.path.dirname(os.path.abspath(__file__))
R = os.path.join(here, '..')


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


teacher = load('demo_teacher', os.path.join(R, '2026-12-03-demo-teacher', 'compare.py'))
focus = load('demo_focus', os.path.join(R, '2026-12-04-demo-focus', 'compare.py'))
sys.path.insert(0, os.path.join(R, '2026-12-02-defaults-816'))
from pool import pool_runs  # noqa: E402
POOL = pool_runs(['--retry', '--seed3', '--rollback-default', '--seed4', '--seeds56', '--fit'], R)
for s in range(1, 7):  # french under today's users (../2026-12-03-asks-back)
    POOL[('french', s)] = f'2026-12-03-asks-back/french-s{s}'


def served(run):
    """Held-out answers liked, summed over the rounds after round 0."""
    return sum(x['satisfied'] for x in run['evals'][1:])


def row(label, run, ks):
    e = run['evals'][-1]
    print(f"  {label:28s} {','.join(ks):34s} r{e['round']} {e['satisfied']:2d}/20  words {e['mean_words']:5.1f}"
          f"  retention {e['retention_right']}/{e['retention_asked']}  r1-{e['round']} {served(run):3d}  {run['seconds']:5.0f} s")


last = {}  # persona -> [focus k, pool k, asked] at the last round, summed over seeds
by_round = {}  # round -> [focus k, pool k, asked], summed over persona-seeds
ahead = [0, 0, 0]  # persona-seeds whose rounds 1-8 sum is ahead, level, behind the pool's
for d in sorted(os.listdir(here)):
    if not os.path.isdir(os.path.join(here, d)) or '-s' not in d:
        continue
    for run, ks in teacher.rounds(os.path.join(here, d), 'focus1'):
        persona, seed = run['persona'], run['seed']
        print(f"{persona} seed {seed}")
        row('--distill-focus 1', run, ks)
        k = run['evals'][-1]['satisfied']
        for prun, pks in teacher.rounds(os.path.join(R, POOL[(persona, seed)]), 'combine'):
            row('pool (serve\'s defaults)', prun, pks)
            t = last.setdefault(persona, [0, 0, 0])
            t[0], t[1], t[2] = t[0] + k, t[1] + prun['evals'][-1]['satisfied'], t[2] + 20
            for fe, pe in zip(run['evals'], prun['evals']):
                b = by_round.setdefault(fe['round'], [0, 0, 0])
                b[0], b[1], b[2] = b[0] + fe['satisfied'], b[1] + pe['satisfied'], b[2] + 20
            fs, ps = served(run), served(prun)
            ahead[0 if fs > ps else 1 if fs == ps else 2] += 1
        for crun, cks in teacher.rounds(os.path.join(here, d), 'combine'):
            row('defaults, this binary', crun, cks)
print()
F = P = N = 0
for persona, (f, p, n) in last.items():
    print(f"{persona} at v8: focus {f} of {n}, defaults {p} of {n}; one-sided Fisher p = {focus.fisher_greater(f, n, p, n):.2g}")
    F, P, N = F + f, P + p, N + n
print(f"all: focus {F} of {N}, defaults {P} of {N}; one-sided Fisher p = {focus.fisher_greater(F, N, P, N):.2g}")
print()
print("by round, summed over the persona-seeds above (focus against the pool):")
for r in sorted(by_round):
    f, p, n = by_round[r]
    print(f"  round {r}: {f} against {p} of {n}; one-sided Fisher p = {focus.fisher_greater(f, n, p, n):.2g}")
f, p, n = (sum(b[i] for r, b in by_round.items() if r > 0) for i in range(3))
print(f"  rounds 1-8: {f} against {p} of {n}")
m = ahead[0] + ahead[2]  # a sign test, the runs as the unit (answers within a run are not independent)
sign_p = sum(math.comb(m, i) for i in range(ahead[0], m + 1)) / 2 ** m if m else 1.0
print(f"persona-seeds whose rounds 1-8 sum is ahead of the pool's: {ahead[0]}, level: {ahead[1]}, behind: {ahead[2]}"
      f"; one-sided sign test p = {sign_p:.2g}")
