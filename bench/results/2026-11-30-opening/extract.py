import sqlite3,struct,json,subprocess,sys
db=sqlite3.connect(sys.argv[1])
rows=db.execute("select p.messages, s.teacher_response_ids from samples s join turns t on t.id=s.turn_id join turn_payloads p on p.turn_seq=t.seq where s.teacher_response_ids is not null order by s.trained_version, s.created_at").fetchall()
ids=[','.join(map(str,struct.unpack('<%di'%(len(b)//4), b))) for _,b in rows]
out=subprocess.run(['/tmp/dec','/root/.cache/clawrl/models/Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf'],input='\n'.join(ids)+'\n',capture_output=True,text=True).stdout.splitlines()
for (m,_),o in zip(rows,out):
    q=json.loads(m)[-1]['content']
    a=json.loads(o).replace('<|im_end|>','')
    print(json.dumps(q)+'\t'+json.dumps(a))
