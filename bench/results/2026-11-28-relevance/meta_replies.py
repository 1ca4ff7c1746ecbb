"""meta_replies.py DB...: the teacher-written answers a store trained (or
holds), and how many open as a reply to the feedback rather than an answer
("Bien sûr", "Je peux vous", "Je suis désolé", "Je vous", "D'accord").
Needs the decoder: go build -o /tmp/dec ./bench/results/2026-11-28-signoff-stores/_dec"""
import sqlite3,struct,subprocess,os,sys,re
GG=os.path.expanduser('~/.cache/clawrl/models/Qwen2.5-Coder-0.5B-Instruct-AWQ.Q4_K_M.gguf')
META=re.compile(r"Bien sûr|Je peux vous|Je suis désolé|Je vous|D'accord")
for db in sys.argv[1:]:
    c=sqlite3.connect(db)
    rows=c.execute("select trained_version, teacher_response_ids from samples where teacher_response_ids is not null order by trained_version").fetchall()
    ids=[','.join(map(str,struct.unpack('<%di'%(len(b)//4),b))) for _,b in rows]
    dec=subprocess.run(['/tmp/dec',GG],input='\n'.join(ids)+'\n',capture_output=True,text=True).stdout.split('\n')
    meta=sum(1 for t in dec[:len(rows)] if META.search(t))
    print(db, 'meta replies %d of %d teacher answers' % (meta, len(rows)))
