#!/usr/bin/env python3
"""Compare two bench learn runs: per version, the content of the samples it
trained (prompt, rated answer, reward, teacher answer), and per round the
held-out answers. Usage: compare.py RUN_A RUN_B"""
import sqlite3, sys, glob, hashlib, json

def db(run):
    # the student's store, not the teacher server's (--keep-data keeps both)
    return sqlite3.connect([p for p in sorted(glob.glob(run + '/data-*/clawrl.db')) if '/data-teacher-server-' not in p][0])

def steps(run):
    c = db(run)
    out = {}
    for v, msgs, resp, reward, tids in c.execute("""select s.trained_version, p.messages, p.response_text, s.reward, s.teacher_response_ids
        from samples s join turns t on t.id = s.turn_id join turn_payloads p on p.turn_seq = t.seq where s.trained_version > 0"""):
        h = hashlib.md5((msgs + '\x00' + resp + '\x00' + '%.6f' % reward).encode() + (tids or b'')).hexdigest()[:10]
        out.setdefault(v, []).append(h)
    vs = {r[0]: (r[1], r[2]) for r in c.execute("select version, status, metrics from versions")}
    return {v: sorted(hs) for v, hs in out.items()}, vs

def evals(run):
    d = json.load(open(run + '/learn.json'))
    return [(e['round'], e.get('policy_version'), e['satisfied'], [a['text'] for a in e['held_out']]) for e in d['runs'][0]['evals']]

a, b = sys.argv[1], sys.argv[2]
(sa, va), (sb, vb) = steps(a), steps(b)
for v in sorted(set(sa) | set(sb)):
    same = sa.get(v) == sb.get(v)
    print('version %d: %d vs %d samples, %s; status %s / %s' % (v, len(sa.get(v, [])), len(sb.get(v, [])),
          'same samples' if same else 'DIFFERENT samples', va.get(v, ('-',))[0], vb.get(v, ('-',))[0]))
for (ra, pa, ka, ha), (rb, pb, kb, hb) in zip(evals(a), evals(b)):
    print('round %d: v%s %d/20 vs v%s %d/20, held-out answers %s' % (ra, pa, ka, pb, kb, 'identical' if ha == hb else 'differ (%d of 20)' % sum(x != y for x, y in zip(ha, hb))))
