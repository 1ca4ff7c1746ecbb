"""starve.py RUN_DIR...: for versions 4-6 of each run, the teacher-written
samples the version trained and the change in held-out satisfied answers
from the version before; then the mean change by that count."""
import json,sqlite3,glob,sys,os
pts=[]
for d in sys.argv[1:]:
    r=json.load(open(d+'/learn.json'))
    sat={e['policy_version']:e['satisfied'] for e in r['runs'][0]['evals']}
    c=sqlite3.connect(glob.glob(d+'/data-combine*/clawrl.db')[0])
    tc={v:n for v,n in c.execute("select trained_version, sum(teacher_response_ids is not null) from samples where trained_version is not null group by 1")}
    row=[]
    for v in range(4,7):
        if v in sat and v-1 in sat:
            pts.append((tc.get(v,0), sat[v]-sat[v-1])); row.append('v%d:%dT %+d'%(v,tc.get(v,0),sat[v]-sat[v-1]))
    print(os.path.basename(d), ' '.join(row))
from collections import defaultdict
g=defaultdict(list)
for t,ds in pts: g[t].append(ds)
for t in sorted(g): print('teacher samples',t,'n',len(g[t]),'mean delta %.1f'%(sum(g[t])/len(g[t])))
