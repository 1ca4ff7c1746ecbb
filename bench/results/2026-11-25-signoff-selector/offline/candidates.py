#!/usr/bin/env python3
# Offline re-pick of the recorded best-of-4 teacher answers
# (bench/results/2026-11-25-qwen-student/{teacher-1.5b-signoff,teacher-self}) under
# the selector candidates: mean hint gain (main), (a) refuse answers with < 3 distinct
# words the feedback does not contain (judge.Refuse), (c) summed gain (mean x tokens,
# tokens counted with the 0.5B's tokenizer by ../tok.go.txt, +1 for <|im_end|> when
# finished), (c)+(a). Run from the repo root: python3 bench/results/2026-11-25-signoff-selector/offline/candidates.py
import json, re, subprocess, os, shutil
from collections import defaultdict
R = 'bench/results/2026-11-25-qwen-student/'
def words(s): return [w.strip("'") for w in re.split(r"[^\w']+", s.lower()) if w.strip("'") and not w.startswith('_')]
FB = {'concise': "Too long. Answer in two or three plain sentences, with no lists and no bold.",
      'signoff': 'Be brief. Your last words must be "Hope this helps!"',
      'tldr': 'Start your answer with a one-line summary that begins with "TL;DR:", then explain.',
      'french': "Réponds en français, s'il te plaît. Answer in French."}
files = [('1.5B teacher', R + 'teacher-1.5b-signoff/n4-signoff.json'), ('0.5B self', R + 'teacher-self/n4.json')]
data, allt = [], []
for name, f in files:
    d = json.load(open(f))
    for per, draws in d['draws'].items():
        data.append((name, per, draws)); allt += [x['text'] for x in draws]
os.makedirs('cmd/zz-tmptok', exist_ok=True)
shutil.copy('bench/results/2026-11-25-signoff-selector/tok.go.txt', 'cmd/zz-tmptok/main.go')
try:
    r = subprocess.run(['go', 'run', './cmd/zz-tmptok', os.path.expanduser('~/.cache/clawrl/models/Qwen2.5-Coder-0.5B-Instruct-AWQ.Q4_K_M.gguf')],
                       input=json.dumps(allt), capture_output=True, text=True, check=True)
finally:
    shutil.rmtree('cmd/zz-tmptok')
ntok = json.loads(r.stdout); k = 0
print('| teacher | persona | mean gain (main) | (a) refuse < 3 own words | (c) summed gain | (c)+(a) | random | any of 4 |')
print('|---|---|---|---|---|---|---|---|')
for name, per, draws in data:
    for x in draws: x['ntok'] = ntok[k] + (1 if x['finished'] else 0); k += 1
    fw = set(words(FB[per]))
    own = lambda t: len(set(w for w in words(t) if w not in fw))
    by = defaultdict(list)
    for x in draws: by[x['prompt']].append(x)
    def run(key, ok=lambda x: True):
        sat = few = none = 0
        for p, xs in by.items():
            c = [x for x in xs if ok(x)]
            if not c: none += 1; continue
            b = max(c, key=key); sat += b['satisfied']; few += own(b['text']) < 3
        return f'{sat}/{len(by)} ({few} < 3 own words' + (f', {none} no pick)' if none else ')')
    print(f"| {name} | {per} | {run(lambda x: x['gain'])} | {run(lambda x: x['gain'], lambda x: own(x['text']) >= 3)} | "
          f"{run(lambda x: x['gain'] * x['ntok'])} | {run(lambda x: x['gain'] * x['ntok'], lambda x: own(x['text']) >= 3)} | "
          f"{sum(x['satisfied'] for x in draws) / 4:.2f} | {sum(any(x['satisfied'] for x in xs) for xs in by.values())} |")
