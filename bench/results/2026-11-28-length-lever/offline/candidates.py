#!/usr/bin/env python3
# Offline re-pick of the recorded best-of-4 teacher answers under length
# rules, from offline/gains.json (prep.py). Every rule first applies main's:
# refuse answers with < 3 own words (judge.Refuse) and keep those whose mean
# hint gain is > 0; main picks the highest gain among them. Satisfaction is the
# recorded checker result of the picked answer (the loop never sees it).
# Run from the repo root: python3 bench/results/2026-11-28-length-lever/offline/candidates.py
import json, re, sys
from collections import defaultdict
HERE = 'bench/results/2026-11-28-length-lever/offline/'
G = json.load(open(HERE + 'gains.json'))
def words(s): return [w.strip("'") for w in re.split(r"[^\w']+", s.lower()) if w.strip("'") and not w.startswith('_')]
crit = G['critiques']
stud = defaultdict(dict)
for x in G['answers']:
    if x['kind'].startswith('student'):
        stud[x['kind']][(x['persona'], x['prompt'])] = x
groups = defaultdict(list)
for x in G['answers']:
    if x['kind'] != 'teacher':
        continue
    fw = set(words(crit[x['persona']]))
    x['own'] = len(set(w for w in words(x['text']) if w not in fw))
    x['g'] = x['gain_recomputed']
    x['eos'] = x['end_gain']
    groups[(x['teacher'], x['persona'], x['prompt'])].append(x)
check = max(abs(x['g'] - x['gain']) for xs in groups.values() for x in xs)

def side(a, s, delta):
    """+1: a is longer than the student's answer s, -1 shorter, 0 neither (both cut, or within delta)."""
    if a['finished'] and a['tokens'] < (1 - delta) * s['tokens']:
        return -1
    if s['finished'] and a['tokens'] > (1 + delta) * s['tokens']:
        return +1
    return 0

def by_student(delta):
    def d(xs, s):
        sides = [side(x, s, delta) for x in xs if x['own'] >= 3]
        k = sum(sides)
        return (k > 0) - (k < 0)
    return d

def by_eos(eps):
    def d(xs, s):
        e = [x['eos'] for x in xs if x['own'] >= 3 and x['eos'] is not None]
        if not e:
            return 0
        m = sum(e) / len(e)
        return 1 if m < -eps else -1 if m > eps else 0
    return d

def pick_main(xs, s, direction=None):
    c = [x for x in xs if x['own'] >= 3 and x['g'] > 0]
    return max(c, key=lambda x: x['g']) if c else None

def rule_side(direction, strict=False, delta=0.1):
    def r(xs, s):
        c = [x for x in xs if x['own'] >= 3 and x['g'] > 0]
        if not c:
            return None
        d = direction(xs, s)
        if d:
            on = [x for x in c if side(x, s, delta) == d]
            if on:
                c = on
            elif strict:
                return None
        return max(c, key=lambda x: x['g'])
    return r

def rule_margin(direction, alpha):
    """Within alpha of the best gain (g >= alpha * best), the extreme length in the feedback's direction."""
    def r(xs, s):
        c = [x for x in xs if x['own'] >= 3 and x['g'] > 0]
        if not c:
            return None
        best = max(x['g'] for x in c)
        d = direction(xs, s)
        if not d:
            return max(c, key=lambda x: x['g'])
        near = [x for x in c if x['g'] >= alpha * best]
        # shorter: fewest tokens, a cut answer counted as longest; longer: most.
        key = lambda x: (x['tokens'] + (0 if x['finished'] else 10**6)) * d
        return max(near, key=lambda x: (key(x), x['g']))
    return r

def rule_sum():
    def r(xs, s):
        c = [x for x in xs if x['own'] >= 3 and x['g'] > 0]
        return max(c, key=lambda x: x['g'] * x['tokens']) if c else None
    return r

def rule_side_margin(direction, alpha, delta=0.1):
    """judge.PreferLength as first built (--teacher-select-length student, ba9b759): best unless an
    answer on the feedback's side of the student's length scores >= best - (1 - alpha) |best|."""
    def r(xs, s):
        c = [x for x in xs if x['own'] >= 3 and x['g'] > 0]
        if not c:
            return None
        best = max(x['g'] for x in c)
        d = direction(xs, s)
        if d:
            on = [x for x in c if side(x, s, delta) == d and x['g'] >= best - (1 - alpha) * abs(best)]
            if on:
                c = on
        return max(c, key=lambda x: x['g'])
    return r

def rule_fit(strict=True):
    """judge.PreferFit (--teacher-select-length fit): when the student's answer was cut off, the best
    gain among answers that end within its tokens, none when none does (strict, built, 22884e4); or
    main's pick then (the preferring form, 47c189f)."""
    def r(xs, s):
        c = [x for x in xs if x['own'] >= 3 and x['g'] > 0]
        if not c:
            return None
        b = max(c, key=lambda x: x['g'])
        fits = lambda x: s['finished'] or (x['finished'] and x['tokens'] <= s['tokens'])
        if fits(b):
            return b
        f = [x for x in c if fits(x)]
        return max(f, key=lambda x: x['g']) if f else (None if strict else b)
    return r

always_short = lambda xs, s: -1
rules = [
    ('main: mean gain + refusal', pick_main),
    ('(c) summed gain', rule_sum()),
    ('**fit: ends within the cut student answer\'s tokens, else none (built, 22884e4)**', rule_fit()),
    ('fit, else main\'s pick (47c189f)', rule_fit(strict=False)),
    ('student side, margin 0.5 (built first, ba9b759)', rule_side_margin(by_student(0.1), 0.5)),
    ('student side, fallback', rule_side(by_student(0.1))),
    ('student side, strict', rule_side(by_student(0.1), strict=True)),
    ('student dir, margin 0.5', rule_margin(by_student(0.1), 0.5)),
    ('student dir, margin 0.75', rule_margin(by_student(0.1), 0.75)),
    ('end gain dir, margin 0.5', rule_margin(by_eos(0.25), 0.5)),
    ('end gain dir, margin 0.75', rule_margin(by_eos(0.25), 0.75)),
    ('end gain dir, side of student', rule_side(lambda xs, s: by_eos(0.25)(xs, s))),
    ('always shorter, margin 0.5 (reference)', rule_margin(always_short, 0.5)),
    ('always shorter, margin 0.75 (reference)', rule_margin(always_short, 0.75)),
]
cols = [('1.5B', 'signoff', 'student'), ('1.5B', 'signoff', 'student_v3'), ('0.5B self', 'signoff', 'student'),
        ('0.5B self', 'concise', 'student'), ('0.5B self', 'tldr', 'student'), ('0.5B self', 'french', 'student')]
print(f'recomputed gain vs recorded: max |diff| {check:.2g}\n')
print('| rule | ' + ' | '.join(f'{t} {p}' + (' (v3 student)' if k == 'student_v3' else '') for t, p, k in cols) + ' |')
print('|---|' + '---|' * len(cols))
for name, rule in rules:
    cells = []
    for t, p, k in cols:
        sat = none = tok = n = 0
        for (tt, pp, pr), xs in sorted(groups.items()):
            if tt != t or pp != p:
                continue
            b = rule(xs, stud[k][(p, pr)])
            if b is None:
                none += 1
                continue
            sat += b['satisfied']; tok += b['tokens']; n += 1
        ch = sum(rule(xs, stud[k][(p, pr)]) is not pick_main(xs, None) for (tt, pp, pr), xs in groups.items() if tt == t and pp == p)
        cells.append(f"{sat}/20, {tok / max(n, 1):.0f}t" + (f', {none} none' if none else '') + (f', {ch} changed' if ch else ''))
    print(f'| {name} | ' + ' | '.join(cells) + ' |')
print('\ndirection per prompt (-1 shorter, +1 longer, 0 none): student-relative / end gain')
for t, p, k in cols:
    ds = [by_student(0.1)(xs, stud[k][(p, pr)]) for (tt, pp, pr), xs in sorted(groups.items()) if tt == t and pp == p]
    de = [by_eos(0.25)(xs, None) for (tt, pp, pr), xs in sorted(groups.items()) if tt == t and pp == p]
    es = [x['eos'] for (tt, pp, pr), xs in groups.items() if tt == t and pp == p for x in xs if x['eos'] is not None and x['own'] >= 3]
    st = [stud[k][(p, i)] for i in range(20)]
    print(f"{t} {p} {k}: student {sum(s['tokens'] for s in st) / 20:.0f}t ({sum(not s['finished'] for s in st)} cut); "
          f"student dir {ds.count(-1)} shorter {ds.count(1)} longer {ds.count(0)} none; "
          f"end gain dir {de.count(-1)} shorter {de.count(1)} longer {de.count(0)} none; mean end gain {sum(es) / max(len(es), 1):.2f} over {len(es)}")
