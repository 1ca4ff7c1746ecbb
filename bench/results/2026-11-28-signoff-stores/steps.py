"""What each trained version learned from: samples by trained_version, kept store."""
import sqlite3, struct, subprocess, sys, os, glob
d = sys.argv[1]
db = glob.glob(os.path.join(d, '*.db'))[0]
c = sqlite3.connect(db)
GG = os.path.expanduser('~/.cache/clawrl/models/Qwen2.5-Coder-0.5B-Instruct-AWQ.Q4_K_M.gguf')  # decoder: go build -o /tmp/dec ./bench/results/2026-11-28-signoff-stores/_dec
def ids(b):
    return list(struct.unpack('<%di' % (len(b)//4), b)) if b else []
rows = c.execute('''SELECT s.trained_version, s.method, s.use_rl, s.reward, s.teacher_response_ids, t.finish_reason,
  t.completion_tokens, t.feedback_rating, p.response_text, t.id, s.why, s.teacher_logprobs, t.policy_version
  FROM samples s JOIN turns t ON t.id=s.turn_id JOIN turn_payloads p ON p.turn_seq=t.seq ORDER BY s.trained_version, s.created_at''').fetchall()
tids = [','.join(map(str, ids(r[4]))) for r in rows]
dec = subprocess.run(['/tmp/dec', GG], input='\n'.join(tids)+'\n', capture_output=True, text=True).stdout.split('\n')
for r, tt, dt in zip(rows, tids, dec):
    tv, m, rl, rew, tr, fin, ct, fb, txt, tid, why, tlp, pv = r
    n = len(ids(tr))
    print(f"v{tv} pv{pv} {m:8s} rl={rl} r={rew:+.2f} fb={fb} rated={ct}tok/{fin} why={why[:60]!r}")
    print(f"    rated: {txt[-90:]!r}")
    if n:
        print(f"    teacher {n} tok: {dt[-120:]}")
print(c.execute('SELECT version, method, metrics FROM versions').fetchall())
