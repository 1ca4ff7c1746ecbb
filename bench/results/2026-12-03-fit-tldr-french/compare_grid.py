"""The SmolLM2 default grid on the new defaults (grid-fit/, run3.sh) against the one recorded on
bin-s47 (../2026-12-02-defaults-816/grid-default-retry): per persona and seed, held-out k/20 by
round for combine and the control, whether each round's 20 answers are the same word for word,
and the turns the fit retry wrote again. Run from this folder: python3 compare_grid.py [GRID]"""
import json, os, sys, glob
here = os.path.dirname(os.path.abspath(__file__))
new = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, 'grid-fit')
old = os.path.join(here, '..', '2026-12-02-defaults-816', 'grid-default-retry')

def runs(d):
    j = json.load(open(os.path.join(d, 'learn.json')))
    return {(r['method'], r['persona'], r['seed']): r for r in j['runs']}

a, b = runs(new), runs(old)
tot = {}
for key in sorted(a):
    ra, rb = a[key], b.get(key)
    sa = [e['satisfied'] for e in ra['evals']]
    line = f"{key[0]:8s} {key[1]:8s} seed {key[2]}: new {sa}"
    if rb:
        sb = [e['satisfied'] for e in rb['evals']]
        same = sum([h['text'] for h in x['held_out']] == [h['text'] for h in y['held_out']] for x, y in zip(ra['evals'], rb['evals']))
        line += f"  recorded {sb}  same answers {same} of {len(sb)}"
        t = tot.setdefault(key[0], [0, 0, 0])
        t[0] += sa[-1]; t[1] += sb[-1]; t[2] += ra['evals'][-1]['asked']
    logs = glob.glob(os.path.join(new, f"serve-{key[0]}-{key[1]}-{key[2]}.log"))
    if logs and key[0] != 'off':
        text = open(logs[0]).read()
        rejected = text.count('msg="version rejected"')
        line += f"  fit retries {text.count('does not end within the rated turn')}  rejected {rejected}"
    print(line)
for m, (x, y, n) in tot.items():
    print(f"{m}: last round {x} of {n} against {y}")
