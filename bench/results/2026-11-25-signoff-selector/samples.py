#!/usr/bin/env python3
# The trained samples of a bench learn run, from a copy of its SQLite store
# (taken every 60 s during the run by the loop in README.md): per sample its
# trained version, RL term, reward and, for a teacher-written sample, the
# teacher's text (decoded with the 0.5B student's tokenizer by tok.go.txt),
# whether it is the bare sign-off ("Hope this helps!" + <|im_end|>, ids
# 38015 419 8609 0 151645) and its own words beside the feedback
# (judge.OwnWords). Then the drop reasons of the selector.
# Usage (repo root): python3 bench/results/2026-11-25-signoff-selector/samples.py STORE.db
import json, os, re, shutil, sqlite3, struct, subprocess, sys
from collections import Counter
FB = 'Be brief. Your last words must be "Hope this helps!"'
BARE = [38015, 419, 8609, 0, 151645]
def words(s): return [w.strip("'") for w in re.split(r"[^\w']+", s.lower()) if w.strip("'") and not w.startswith('_')]
fw = set(words(FB))
own = lambda t: len(set(w for w in words(t) if w not in fw))
db = sqlite3.connect(sys.argv[1])
rows = db.execute('SELECT trained_version, use_rl, reward, teacher_response_ids FROM samples ORDER BY trained_version, created_at').fetchall()
ids = [list(struct.unpack('<%di' % (len(b) // 4), b)) if b else [] for _, _, _, b in rows]
here = os.path.dirname(os.path.abspath(__file__))
os.makedirs('cmd/zz-tmptok', exist_ok=True)
shutil.copy(os.path.join(here, 'tok.go.txt'), 'cmd/zz-tmptok/main.go')
try:
    r = subprocess.run(['go', 'run', './cmd/zz-tmptok', os.path.expanduser('~/.cache/clawrl/models/Qwen2.5-Coder-0.5B-Instruct-AWQ.Q4_K_M.gguf'), 'decode'],
                       input=json.dumps(ids), capture_output=True, text=True, check=True)
finally:
    shutil.rmtree('cmd/zz-tmptok')
texts = json.loads(r.stdout)
print('trained_version\tuse_rl\treward\tteacher_tokens\tbare_signoff\town_words\tteacher_text')
per = Counter(); bare = Counter(); teach = Counter()
for (v, rl, rw, _), x, t in zip(rows, ids, texts):
    b = int(x == BARE)
    per[v] += 1; bare[v] += b; teach[v] += bool(x)
    print(f'{v}\t{rl}\t{rw:g}\t{len(x)}\t{b}\t{own(t) if x else ""}\t{json.dumps(t) if x else ""}')
print('# per trained version: samples, teacher-written, bare sign-offs')
for v in sorted(per):
    print(f'# v{v}: {per[v]} samples, {teach[v]} teacher-written, {bare[v]} bare')
print('# drop reasons (kind before the colon, count)')
for (reason, n) in db.execute("SELECT drop_reason, count(*) FROM turns WHERE state = 'dropped' GROUP BY drop_reason ORDER BY 2 DESC"):
    print(f'# {n}\t{reason}')
