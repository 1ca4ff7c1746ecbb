"""Fit retry runs (this folder, or RUNS) against the defaults' runs of the same seeds (BASE, by default
../2026-12-02-seeds56; for seed4/, ../2026-12-02-rollback).

    python3 compare.py [BASE [RUNS]]
"""
import json, os, re, sqlite3, sys, glob
base = sys.argv[1] if len(sys.argv) > 1 else '../2026-12-02-seeds56'
here = sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(os.path.abspath(__file__))
def evals(f):
    j = json.load(open(f))
    r = next(x for x in j['runs'] if x['method'] != 'off')
    return r['evals'], j['seconds']
def over(d):
    dbs = glob.glob(d + '/data-combine-*/clawrl.db')
    if not dbs: return '?'
    c = sqlite3.connect(dbs[0])
    rows = c.execute("select length(s.teacher_response_ids)/4, t.max_tokens from samples s join turns t on t.id=s.turn_id where length(s.teacher_response_ids)>0").fetchall()
    return f"{sum(1 for n, m in rows if n - 1 > (m or 64))}/{len(rows)}"
tot = {}
for f in sorted(glob.glob(here + '/*-s[0-9]/learn.json')):
    name = os.path.basename(os.path.dirname(f)); p, s = name.rsplit('-s', 1)
    new, secs = evals(f)
    old, _ = evals(f'{base}/seed{s}/{name}/learn.json')
    log = open(glob.glob(os.path.dirname(f) + '/serve-combine-*.log')[0]).read()
    fit = log.count('does not end within the rated turn'); kept = log.count("teacher's answer is kept")
    fmt = lambda ev: ','.join(str(e['satisfied']) for e in ev)
    print(f"{name}: fit retry {fmt(new)} | defaults {fmt(old)} | v8 {new[-1]['satisfied']} vs {old[-1]['satisfied']} | "
          f"rounds 4-8 {sum(e['satisfied'] for e in new[4:])} vs {sum(e['satisfied'] for e in old[4:])} | words v8 {new[-1]['mean_words']:.0f} vs {old[-1]['mean_words']:.0f} | "
          f"retention min {min(e['retention_right'] for e in new)}/8 | fit retries {fit} (kept {kept}) | over budget {over(os.path.dirname(f))} vs {over(f'{base}/seed{s}/{name}')} | {secs:.0f} s")
    a, b = tot.get('v8', (0, 0)); tot['v8'] = (a + new[-1]['satisfied'], b + old[-1]['satisfied'])
print('sum at v8:', tot.get('v8'))
