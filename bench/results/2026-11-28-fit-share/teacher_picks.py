"""teacher_picks.py RUN_DIR...: per version, how many of the teacher-written
samples it trained end with "Hope this helps!" after at least 3 words of
answer (the signoff persona's checker, approximated). Needs the decoder:
go build -o /tmp/dec ./bench/results/2026-11-28-signoff-stores/_dec"""
import sqlite3,glob,struct,subprocess,sys,os,re
GG=os.path.expanduser('~/.cache/clawrl/models/Qwen2.5-Coder-0.5B-Instruct-AWQ.Q4_K_M.gguf')
for d in sys.argv[1:]:
    db=glob.glob(d+'/data-combine*/clawrl.db')[0]
    c=sqlite3.connect(db)
    rows=c.execute("select trained_version, teacher_response_ids from samples where teacher_response_ids is not null and trained_version is not null order by 1").fetchall()
    ids=[','.join(map(str,struct.unpack('<%di'%(len(b)//4),b))) for _,b in rows]
    dec=subprocess.run(['/tmp/dec',GG],input='\n'.join(ids)+'\n',capture_output=True,text=True).stdout.split('\n')
    per={}
    for (v,_),t in zip(rows,dec):
        t=t.strip().strip('"').replace('<|im_end|>','').strip()
        ok=bool(re.search(r'hope this helps[!.]?\s*$',t,re.I)) and len(re.findall(r"\w+",t))>=6
        a=per.setdefault(v,[0,0]); a[0]+=ok; a[1]+=1
    tot=[sum(x[0] for x in per.values()),sum(x[1] for x in per.values())]
    print(os.path.basename(d), ' '.join('v%d:%d/%d'%(v,a[0],a[1]) for v,a in sorted(per.items())), ' total %d/%d'%tuple(tot))
