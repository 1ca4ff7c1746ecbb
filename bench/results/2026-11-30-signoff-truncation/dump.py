import sqlite3, struct, json, sys
db = sqlite3.connect(sys.argv[1])
q = """select s.turn_id, s.trained_version, j.score, p.prompt_ids, p.response_ids, s.teacher_response_ids, t.seq, s.use_rl, p.response_text
from samples s join judgments j on j.turn_id=s.turn_id join turns t on t.id=s.turn_id join turn_payloads p on p.turn_seq=t.seq order by t.seq"""
ints = lambda b: list(struct.unpack('<%di' % (len(b)//4), b)) if b else None
for tid, tv, sc, pi, ri, ti, seq, rl, txt in db.execute(q):
    print(json.dumps(dict(turn=tid, trained=tv, score=sc, seq=seq, prompt=ints(pi), response=ints(ri), teacher=ints(ti), rl=rl, text=txt)))
