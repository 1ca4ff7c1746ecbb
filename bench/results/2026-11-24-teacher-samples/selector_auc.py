import json, sys, statistics
d = json.load(open(sys.argv[1])); key = sys.argv[2] if len(sys.argv) > 2 else 'gain'
thrs = [float(x) for x in (sys.argv[3].split(',') if len(sys.argv) > 3 else ['-1e9','0','0.1','0.2'])]
N = d['samples']
tot = {}
for p, ds in d['draws'].items():
    by = {}
    for x in ds: by.setdefault(x['prompt'], []).append(x)
    sat = [x.get(key, 0) for x in ds if x['satisfied']]; uns = [x.get(key, 0) for x in ds if not x['satisfied']]
    auc = sum((s > u) + 0.5*(s == u) for s in sat for u in uns) / (len(sat)*len(uns)) if sat and uns else float('nan')
    wp = wn = 0
    for xs in by.values():
        for a in xs:
            for b in xs:
                if a['satisfied'] and not b['satisfied']:
                    wn += 1; wp += (a.get(key,0) > b.get(key,0)) + 0.5*(a.get(key,0) == b.get(key,0))
    print(f"{p} [{key}]: {len(ds)} answers, {len(sat)} sat; median sat {statistics.median(sat) if sat else float('nan'):.3f} unsat {statistics.median(uns) if uns else float('nan'):.3f}; AUC {auc:.2f}, within-prompt {wp/wn if wn else float('nan'):.2f} ({wn} pairs)")
    k = 1
    while True:
        k = min(k, N)
        for thr in thrs:
            sel = picked = 0
            for xs in by.values():
                c = [x for x in xs[:k] if x.get(key, 0) > thr]
                if c:
                    picked += 1; sel += max(c, key=lambda x: x.get(key, 0))['satisfied']
            print(f"   k={k} thr={thr:g}: selected {sel}/{len(by)}, picked {picked}, precision {sel/picked if picked else float('nan'):.2f}")
        if k == N: break
        k *= 2
