"""tldr and french with --teacher-fit-retry 4 --teacher-fit-retry-scope any (PERSONA-sSEED in
this folder, or RUNS; bin-s51, run.sh), and on serve's new defaults, the fit retry 4 under the
quoted scope (scoped-PERSONA-sSEED, bin-s51b, run2.sh), against the same seeds' runs on the
former defaults in the six-seed pool (../2026-12-02-defaults-816/pool.py with --retry --seed3
--rollback-default --seed4 --seeds56). Run from this folder:

    python3 compare.py [RUNS]

Per run: held-out k/20 by round ('=': the version served did not change: the round's step was
held or its version rejected), at v8 and over rounds 4-8; the turns the fit retry wrote again
and those whose one answer it kept; held steps; rejected versions; for the scoped runs, whether
every round's 20 held-out answers are those of the defaults' run, word for word."""
import json, os, sys, glob
here = os.path.dirname(os.path.abspath(__file__))
runs = sys.argv[1] if len(sys.argv) > 1 else here
R = os.path.join(here, '..')
DEFAULTS = {
    ('tldr', 1): '2026-12-02-defaults-816/tldr-s1-retry', ('tldr', 2): '2026-12-02-defaults-816/tldr-s2-retry',
    ('tldr', 3): '2026-12-02-rollback/tldr-s3-rollback', ('tldr', 4): '2026-12-02-rollback/seed4/tldr-s4',
    ('french', 1): '2026-12-02-avoid-default/target-french-s1-defaults',
    ('french', 2): '2026-12-02-avoid-default/target-french-s2-defaults-avoid',
    ('french', 3): '2026-12-02-defaults-816/seed3/french-s3', ('french', 4): '2026-12-02-rollback/seed4/french-s4',
    ('signoff', 1): '2026-12-02-defaults-816/signoff-s1-retry', ('signoff', 2): '2026-12-02-defaults-816/signoff-s2-retry',
}
# signoff with --teacher-fit-retry 4 before the scope (every turn it wrote again quoted the
# sign-off the answer said past the budget, so the quoted scope should change none of them)
FIT_ANY = {('signoff', s): f'2026-12-03-quoted-fit/signoff-s{s}' for s in range(1, 7)}

def read(d):
    j = json.load(open(os.path.join(d, 'learn.json')))
    run = next(x for x in j['runs'] if x['method'] != 'off')
    ev = run['evals']
    log = ''.join(open(f).read() for f in glob.glob(d + '/serve-combine-*.log'))
    return dict(held_out=[[h['text'] for h in e['held_out']] for e in ev], sat=[e['satisfied'] for e in ev], ver=[e['policy_version'] for e in ev],
                words=ev[-1]['mean_words'], ret=min(e['retention_right'] for e in ev),
                fit=log.count('does not end within the rated turn'), kept=log.count("teacher's answer is kept"),
                held=log.count('msg="step held"'), rejected=log.count('msg="version rejected"'))

def line(r):
    out, prev = [], -1
    for s, v in zip(r['sat'], r['ver']):
        out.append(('=' if v == prev else '') + str(s))
        prev = v
    return ','.join(out)

if __name__ == '__main__':  # read() and line() are shared with ../2026-12-03-single-binary/compare.py
    tot = {'fit': [0, 0], 'def': [0, 0]}
    for persona in ('tldr', 'french'):
        for seed in (1, 2, 3, 4):
            d = os.path.join(runs, f'{persona}-s{seed}')
            if not os.path.exists(os.path.join(d, 'learn.json')):
                continue
            a, b = read(d), read(os.path.join(R, DEFAULTS[(persona, seed)]))
            for k, r in (('fit', a), ('def', b)):
                tot[k][0] += r['sat'][-1]
                tot[k][1] += sum(r['sat'][4:])
            print(f"{persona} seed {seed}")
            print(f"  fit retry  {line(a):40s} v8 {a['sat'][-1]:2d}  r4-8 {sum(a['sat'][4:]):3d}  {a['words']:.0f}w  ret {a['ret']}/8"
                  f"  fit retries {a['fit']} (one answer kept {a['kept']})  held {a['held']}  rejected {a['rejected']}")
            print(f"  defaults   {line(b):40s} v8 {b['sat'][-1]:2d}  r4-8 {sum(b['sat'][4:]):3d}  {b['words']:.0f}w  ret {b['ret']}/8"
                  f"  held {b['held']}  rejected {b['rejected']}")
    for persona in ('tldr', 'signoff', 'french'):
        for seed in (1, 2, 3, 4):
            d = os.path.join(runs, f'scoped-{persona}-s{seed}')
            if not os.path.exists(os.path.join(d, 'learn.json')) or (persona, seed) not in DEFAULTS:
                continue
            a, b = read(d), read(os.path.join(R, DEFAULTS[(persona, seed)]))
            same = sum(x == y for x, y in zip(a['held_out'], b['held_out']))
            print(f"{persona} seed {seed}, the new defaults (scope quoted)")
            print(f"  scoped     {line(a):40s} v8 {a['sat'][-1]:2d}  r4-8 {sum(a['sat'][4:]):3d}  fit retries {a['fit']}  held {a['held']}  rejected {a['rejected']}")
            print(f"  defaults   {line(b):40s} v8 {b['sat'][-1]:2d}  r4-8 {sum(b['sat'][4:]):3d}  rounds with the same 20 answers: {same} of {len(b['held_out'])}")
            if (persona, seed) in FIT_ANY:
                c = read(os.path.join(R, FIT_ANY[(persona, seed)]))
                same = sum(x == y for x, y in zip(a['held_out'], c['held_out']))
                print(f"  scope any  {line(c):40s} v8 {c['sat'][-1]:2d}  r4-8 {sum(c['sat'][4:]):3d}  fit retries {c['fit']}  rounds with the same 20 answers: {same} of {len(c['held_out'])}")
    print(f"total (scope any): v8 {tot['fit'][0]} against {tot['def'][0]}; rounds 4-8 {tot['fit'][1]} against {tot['def'][1]}")
