"""Signoff with --teacher-fit-retry 4 and the quoted retry's pick fitting too (this folder, or RUNS)
against the same seeds on serve's defaults and, where run, with the fit retry before this change
(../2026-12-02-fit-retry). Run from this folder:

    python3 compare.py [RUNS]

Per run: held-out k/20 by round, at v8 and over rounds 4-8; what the unsatisfied held-out answers
of rounds 4-8 were (cut at the 64-token limit, ended without the sign-off, looping); the trained
teacher answers that ran past their turn's budget; the quoted retries and the picks the fit
preference moved."""
import json, os, re, sqlite3, sys, glob
here = os.path.dirname(os.path.abspath(__file__))
runs = sys.argv[1] if len(sys.argv) > 1 else here
R = os.path.join(here, '..')
DEFAULTS = {1: '2026-12-02-defaults-816/signoff-s1-retry', 2: '2026-12-02-defaults-816/signoff-s2-retry',
            3: '2026-12-02-defaults-816/seed3/signoff-s3', 4: '2026-12-02-rollback/seed4/signoff-s4',
            5: '2026-12-02-seeds56/seed5/signoff-s5', 6: '2026-12-02-seeds56/seed6/signoff-s6'}
FITRETRY = {4: '2026-12-02-fit-retry/seed4/signoff-s4', 5: '2026-12-02-fit-retry/signoff-s5',
            6: '2026-12-02-fit-retry/signoff-s6'}

def loops(a):  # rl.Loops
    w = [x.strip("'’") for x in re.split(r"[^\w'’]+", a.lower()) if x.strip("'’")]
    for p in range(1, 25):
        if 3 * p > len(w):
            break
        run = 0
        for i in range(p, len(w)):
            if w[i] != w[i - p]:
                run = 0
                continue
            run += 1
            if run >= 2 * p and run + p >= 6:
                return True
    return False

def read(d):
    j = json.load(open(os.path.join(d, 'learn.json')))
    ev = next(x for x in j['runs'] if x['method'] != 'off')['evals']
    miss = {'cut': 0, 'no sign-off': 0, 'loop': 0}
    for e in ev[4:]:
        for h in e['held_out']:
            t = h['text'].rstrip()
            if loops(t):
                miss['loop'] += 1
            elif t.endswith('Hope this helps!'):
                continue  # satisfied (cut or not: the persona reads the text)
            elif not h.get('finished', True):
                miss['cut'] += 1
            elif not t.endswith('Hope this helps!'):
                miss['no sign-off'] += 1
    over = '?'
    dbs = glob.glob(d + '/data-combine-*/clawrl.db')
    if dbs:
        rows = sqlite3.connect(dbs[0]).execute("select length(s.teacher_response_ids)/4, t.max_tokens from samples s join turns t on t.id=s.turn_id where length(s.teacher_response_ids)>0").fetchall()
        over = f"{sum(1 for n, m in rows if n - 1 > (m or 64))}/{len(rows)}"
    log = ''.join(open(f).read() for f in glob.glob(d + '/serve-combine-*.log'))
    return dict(sat=[e['satisfied'] for e in ev], words=ev[-1]['mean_words'], miss=miss, over=over,
                quoted=log.count('quoted words: written again'), moved=log.count("quoted retry's answer that ends within"),
                fit=log.count('does not end within the rated turn'), kept=log.count("teacher's answer is kept"),
                ret=min(e['retention_right'] for e in ev))

def line(name, r):
    s = r['sat']
    return (f"  {name:11s} {','.join(map(str, s))} | v8 {s[-1]} | rounds 4-8 {sum(s[4:])} | words v8 {r['words']:.0f} | "
            f"misses 4-8 {r['miss']} | over budget {r['over']} | quoted retries {r['quoted']} (moved to fit {r['moved']}) | "
            f"fit retries {r['fit']} (kept {r['kept']}) | retention min {r['ret']}/8")

tot = {}
for d in sorted(glob.glob(os.path.join(runs, 'signoff-s[0-9]'))):
    seed = int(d.rsplit('-s', 1)[1])
    if not os.path.exists(d + '/learn.json'):
        continue
    print(f"signoff seed {seed}")
    arms = [('quoted fit', d), ('defaults', os.path.join(R, DEFAULTS[seed]))]
    if seed in FITRETRY:
        arms.append(('fit retry', os.path.join(R, FITRETRY[seed])))
    for name, folder in arms:
        r = read(folder)
        print(line(name, r))
        a = tot.setdefault(name, [0, 0, 0])
        a[0] += r['sat'][-1]; a[1] += sum(r['sat'][4:]); a[2] += 1
for name, (v8, r48, n) in tot.items():
    print(f"sum {name}: v8 {v8}, rounds 4-8 {r48} over {n} seeds")
