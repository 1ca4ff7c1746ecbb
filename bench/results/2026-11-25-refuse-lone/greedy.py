#!/usr/bin/env python3
# How many greedy (lone, --teacher-samples 1) teacher answers recorded by 'clawrl bench teacher' judge.Refuse's
# own-words rule (< 3 distinct words not in the feedback) refuses. Words as in
# bench/results/2026-11-25-signoff-selector/offline/candidates.py. Run from the repo root.
import json, re
def words(s): return [w.strip("'") for w in re.split(r"[^\w']+", s.lower()) if w.strip("'") and not w.startswith('_')]
FB = {'concise': "Too long. Answer in two or three plain sentences, with no lists and no bold.",
      'signoff': 'Be brief. Your last words must be "Hope this helps!"',
      'tldr': 'Start your answer with a one-line summary that begins with "TL;DR:", then explain.',
      'french': "Réponds en français, s'il te plaît. Answer in French."}
R='bench/results/2026-11-25-qwen-student/'
for name,f in [('0.5B self',R+'teacher-self/greedy.json'),('1.5B',R+'teacher-1.5b-signoff/greedy-signoff.json')]:
    d=json.load(open(f))
    if isinstance(d,dict): d=[d]
    for p in d:
        per=p['persona']; fw=set(words(FB[per])); ans=p['answers']
        if ans and isinstance(ans[0],dict):
            keys=list(ans[0].keys())
        texts=[a.get('with_hint') or a.get('hint') or a.get('text') if isinstance(a,dict) else a for a in ans]
        few=[t for t in texts if t is not None and len(set(w for w in words(t) if w not in fw))<3]
        print(f"{name} | {per} | {len(few)} of {len(texts)} | {sorted(set(few))}")
