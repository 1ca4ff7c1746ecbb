#!/usr/bin/env python3
"""align.py RUN_A RUN_B: two kept runs of one seed, their trained samples matched by
the rated turn's messages (session ids and turn numbers differ between runs): the version
each trained, whether the teacher's answer and the student's rated answer are the same
tokens, then both runs' versions with the start of their metrics."""
import sqlite3,glob,sys,json
def load(d):
    db=sqlite3.connect(f'file:{glob.glob(d+"/data-combine*/clawrl.db")[0]}?mode=ro',uri=True)
    rows=db.execute("select t.seq, p.messages, s.trained_version, s.teacher_response_ids, p.response_ids, t.session_id from samples s join turns t on t.id=s.turn_id join turn_payloads p on p.turn_seq=t.seq order by t.seq").fetchall()
    return {r[1]:r for r in rows}, db
a,da=load(sys.argv[1]); b,db_=load(sys.argv[2])
for k in sorted(set(a)|set(b), key=lambda k:(a.get(k) or b.get(k))[0]):
    x,y=a.get(k),b.get(k)
    if not x or not y: print(k,'only in', 'A' if x else 'B', (x or y)[2]); continue
    print(k[:40], 'v',x[2],y[2],'teacher same',x[3]==y[3],'student resp same',x[4]==y[4])
for q in ("select version,status,substr(metrics,1,60) from versions order by version",):
    for r1,r2 in zip(da.execute(q),db_.execute(q)): print(r1); print(r2)
