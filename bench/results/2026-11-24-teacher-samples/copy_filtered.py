import json, sys, re, unicodedata
HEADER = "[user's hint / instruction]"
def words(s):
    out, cur = [], []
    for ch in s.lower():
        if ch.isalpha() or ch.isdigit() or ch == "'":
            cur.append(ch)
        elif cur:
            out.append(''.join(cur)); cur = []
    if cur: out.append(''.join(cur))
    return out
def copies(a, fb):
    if HEADER in a: return True
    fw, aw = words(fb), words(a)
    if len(fw) < 5: return False
    runs = {' '.join(fw[i:i+5]) for i in range(len(fw)-4)}
    return any(' '.join(aw[i:i+5]) in runs for i in range(len(aw)-4))
crit = {"concise": "Too long. Answer in two or three plain sentences, with no lists and no bold.",
        "signoff": 'Be brief. Your last words must be "Hope this helps!"',
        "tldr": 'Start your answer with a one-line summary that begins with "TL;DR:", then explain.',
        "french": "Réponds en français, s'il te plaît. Answer in French."}
d = json.load(open(sys.argv[1])); N = d['samples']
ks = [k for k in [1,2,4,8] if k <= N]
print("persona | copies (sat) | " + " | ".join(f"k={k} gain/judge/random/any" for k in ks))
tot = {k: [0,0,0,0] for k in ks}
for p in ['concise','signoff','tldr','french']:
    ds = d['draws'][p]; n = len(ds)//N
    cp = [copies(x['text'], crit[p]) for x in ds]
    row = [f"{sum(cp)} ({sum(1 for x,c in zip(ds,cp) if c and x['satisfied'])})"]
    for k in ks:
        g = j = anyk = 0; rnd = 0.0
        for i in range(n):
            xs = list(zip(ds[i*N:i*N+k], cp[i*N:i*N+k]))
            ok = [x for x,c in xs if x['satisfied']]
            rnd += len(ok)/k; anyk += bool(ok)
            cand = [x for x,c in xs if not c]
            if cand:
                g += max(cand, key=lambda x: x['gain'])['satisfied']
                j += max(cand, key=lambda x: x['score'])['satisfied']
        row.append(f"{g}/{j}/{rnd:.1f}/{anyk} of {n}")
        t = tot[k]; t[0] += g/n; t[1] += j/n; t[2] += rnd/n; t[3] += anyk/n
    print(p, '|', ' | '.join(row))
print('mean', '|', '|', ' | '.join(f"{t[0]/4:.2f}/{t[1]/4:.2f}/{t[2]/4:.2f}/{t[3]/4:.2f}" for t in tot.values()))
