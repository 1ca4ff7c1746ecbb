"""Per run: held-out outcome kinds per round, and trained teacher answers over the 64-token budget per version."""
import json, sqlite3, struct, glob, os, re, sys
R='bench/results/2026-11-28-signoff-stores'
def loops(t):
    w=re.findall(r"[\w']+", t.lower())
    for n in range(1,25):
        for i in range(len(w)-3*n+1):
            if w[i:i+n]==w[i+n:i+2*n]==w[i+2*n:i+3*n] and 3*n>=6: return True
    return False
for d in sys.argv[1:]:
    r=json.load(open(f'{R}/{d}/learn.json'))
    out=[]
    for e in r['runs'][0]['evals']:
        ho=e['held_out']; s=e['satisfied']
        cut=sum(1 for h in ho if not h['finished'])
        lp=sum(1 for h in ho if loops(h['text']))
        out.append(f"v{e['policy_version']}:{s}/cut{cut}/loop{lp}")
    db=glob.glob(f'{R}/{d}/data-combine*/clawrl.db')[0]
    c=sqlite3.connect(db)
    over=[]
    for v, n, o in c.execute("select trained_version, count(*), sum(length(teacher_response_ids)/4>64) from samples where teacher_response_ids is not null group by 1"):
        over.append(f"v{v}:{o}/{n}")
    print(d, ' '.join(out)); print('   teacher answers >64 tok:', ' '.join(over))
