#!/usr/bin/env python3
# Per run folder (learn.json, and store-copy.db when the store was copied
# during the run): held-out k/20 per served version with mean words and the
# answers cut off at 64 tokens; the teacher-written samples trained per
# version: how many, their mean tokens, how many end (<|im_end|>), and how
# many were written for a rated answer that was cut off yet do not end
# within its tokens (what --teacher-select-length fit refuses); the drop
# reasons. Usage: python3 runs.py DIR... (writes DIR/runs.txt beside each)
import json, os, sqlite3, struct, sys
from collections import defaultdict
IM_END = 151645
for d in sys.argv[1:]:
    out = []
    if not os.path.exists(os.path.join(d, 'learn.json')):  # a run stopped early: its log's evaluations
        for line in open(os.path.join(d, 'bench.log')):
            if 'msg=evaluated' in line:
                f = dict(kv.split('=', 1) for kv in line.split() if '=' in kv)
                out.append(f"  v{f.get('version', '0')}: {f['satisfied']}/{f['asked']}, {float(f['words']):.1f} words, retention {f['retention']}/8")
    runs = json.load(open(os.path.join(d, 'learn.json')))['runs'] if os.path.exists(os.path.join(d, 'learn.json')) else []
    for r in runs:
        out.append(f"{r['arm']} {r['persona']} seed {r['seed']}" + (f" — {r['stalled']}" if r.get('stalled') else ''))
        for e in r['evals']:
            h = e.get('held_out') or []
            cut = sum(not a['finished'] for a in h)
            out.append(f"  v{e['policy_version']}: {e['satisfied']}/{e['asked']}, {e['mean_words']:.1f} words, {cut} cut, retention {e['retention_right']}/{e['retention_asked']}")
    db = os.path.join(d, 'store-copy.db')
    if os.path.exists(db):
        c = sqlite3.connect(db)
        per = defaultdict(list)
        for v, fin, ctoks, b in c.execute("""SELECT s.trained_version, t.finish_reason, t.completion_tokens, s.teacher_response_ids
                FROM samples s JOIN turns t ON t.id = s.turn_id WHERE length(s.teacher_response_ids) > 0"""):
            ids = struct.unpack('<%di' % (len(b) // 4), b)
            ended = ids[-1] == IM_END
            fits = fin != 'length' or (ended and len(ids) <= ctoks)
            per[v].append((len(ids), ended, fits, fin == 'length'))
        out.append('teacher-written samples by trained version (0: not yet trained): n, mean tokens, ended, on a cut rated answer, not fitting it')
        for v in sorted(per):
            xs = per[v]
            out.append(f"  v{v}: {len(xs)}, {sum(x[0] for x in xs) / len(xs):.0f} tokens, {sum(x[1] for x in xs)} ended, {sum(x[3] for x in xs)} on cut, {sum(not x[2] for x in xs)} not fitting")
        out.append('drop reasons:')
        for reason, n in c.execute("SELECT drop_reason, count(*) FROM turns WHERE state = 'dropped' GROUP BY drop_reason ORDER BY 2 DESC"):
            out.append(f"  {n}\t{reason}")
    open(os.path.join(d, 'runs.txt'), 'w').write('\n'.join(out) + '\n')
    print(d); print('\n'.join(out))
