#!/usr/bin/env python3
# Offline re-pick of the recorded best-of-4 signoff teacher answers (1.5B teacher, and the 0.5B as
# its own teacher; bench/results/2026-11-25-qwen-student/*/n4*.json, gains read by the 0.5B) by the
# hint gain (> 0, answers with fewer than 3 words of their own refused, as judge.Refuse), against the
# same with --teacher-select-quoted's preference for answers that say "Hope this helps!".
# Run from the repo root: python3 bench/results/2026-11-30-rewrite/quoted_offline.py
import json, re
from collections import defaultdict
FB = 'Be brief. Your last words must be "Hope this helps!"'
fw = set(w for w in re.split(r"[^\w']+", FB.lower()) if w)
def own(t): return len(set(w for w in re.split(r"[^\w']+", t.lower()) if w and w not in fw))
R = 'bench/results/2026-11-25-qwen-student/'
for name, f in [('1.5B teacher', R + 'teacher-1.5b-signoff/n4-signoff.json'), ('0.5B its own teacher', R + 'teacher-self/n4.json')]:
    by = defaultdict(list)
    for x in json.load(open(f))['draws']['signoff']:
        by[x['prompt']].append(x)
    n = g = q = signed = 0
    for xs in by.values():
        ok = [x for x in xs if own(x['text']) >= 3 and x['gain'] > 0]
        if not ok:
            continue
        n += 1
        best = max(ok, key=lambda x: x['gain'])
        g += best['satisfied']
        says = [x for x in ok if 'Hope this helps!' in x['text']]
        signed += bool(says)
        q += max(says, key=lambda x: x['gain'])['satisfied'] if says else best['satisfied']
    print(f'{name}: {n} prompts with a pick; liked picks: gain {g}, gain + quoted {q}; prompts with a signed answer among the 4: {signed}')
