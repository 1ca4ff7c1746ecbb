#!/usr/bin/env python3
# Builds offline/gains.json: the recorded best-of-4 teacher answers of the four
# personas (bench/results/2026-11-25-qwen-student/{teacher-1.5b-signoff,teacher-self}/n4*.json)
# with, per answer, its token count and per-token log-probabilities with and
# without the feedback, read by the 0.5B student's base weights (judge.HintGain's
# two passes, by gain.go.txt); and the student's own answers to the same prompts
# (the base 0.5B's held-out answers at v0, offline/v0/learn.json, and a later
# policy's: the v3 held-out answers of 2026-11-25-signoff-teacher-base/seed1) with
# their token counts. Run from the repo root (about 10 min on 2 cores):
#   python3 bench/results/2026-11-28-length-lever/offline/prep.py
import json, os, shutil, subprocess
HERE = 'bench/results/2026-11-28-length-lever/offline/'
R = 'bench/results/2026-11-25-qwen-student/'
Q = os.path.expanduser('~/.cache/clawrl/models/Qwen2.5-Coder-0.5B-Instruct-AWQ.Q4_K_M.gguf')
v0 = json.load(open(HERE + 'v0/learn.json'))
personas = {p['Name']: p for p in v0['config']['Personas']}
students = {r['persona']: r['evals'][0]['held_out'] for r in v0['runs']}
late = json.load(open('bench/results/2026-11-25-signoff-teacher-base/seed1/learn.json'))
students_v3 = {'signoff': [e for e in late['runs'][0]['evals'] if e['policy_version'] == 3][0]['held_out']}
items, index = [], []
for name, f in [('1.5B', R + 'teacher-1.5b-signoff/n4-signoff.json'), ('0.5B self', R + 'teacher-self/n4.json')]:
    for per, draws in json.load(open(f))['draws'].items():
        p = personas[per]
        for d in draws:
            index.append({'kind': 'teacher', 'teacher': name, 'persona': per, **d})
            items.append({'question': p['Eval'][d['prompt']], 'feedback': p['Critique'], 'text': d['text'], 'finished': d['finished']})
for kind, st in [('student', students), ('student_v3', students_v3)]:
    for per, answers in st.items():
        for i, a in enumerate(answers):
            index.append({'kind': kind, 'persona': per, 'prompt': i, 'text': a['text'], 'finished': a['finished']})
            items.append({'question': personas[per]['Eval'][i], 'feedback': '', 'text': a['text'], 'finished': a['finished']})
os.makedirs('cmd/zz-tmpgain', exist_ok=True)
shutil.copy(HERE + 'gain.go.txt', 'cmd/zz-tmpgain/main.go')
try:
    r = subprocess.run(['go', 'run', './cmd/zz-tmpgain', Q], input=json.dumps(items), capture_output=True, text=True, check=True)
finally:
    shutil.rmtree('cmd/zz-tmpgain')
for x, o in zip(index, json.loads(r.stdout)):
    w, wo = o.pop('with', None), o.pop('without', None)
    x.update(o)
    if w:  # the mean per-token gain (judge.HintGain) and the stop token's gain
        x['gain_recomputed'] = round(sum(a - b for a, b in zip(w, wo)) / len(w), 6)
        x['end_gain'] = round(w[-1] - wo[-1], 6) if x['finished'] else None
json.dump({'critiques': {k: p['Critique'] for k, p in personas.items()}, 'answers': index}, open(HERE + 'gains.json', 'w'))
