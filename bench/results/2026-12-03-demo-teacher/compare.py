"""The demo model's default grid (3 versions of 8) by teacher: its own (the recorded grid,
../2026-12-03-fit-tldr-french/grid-fit, serve's defaults on bin-s51b), Qwen2.5-Coder-1.5B
through --teacher-serve (grid-s1, pair-s2's combine arm), and the 1.5B with --distill-focus 1
(focus1-s1, pair-s2's focus1 arm), and its own teacher with --distill-focus 1 (own-focus1). Then signoff seed 1 over 6 versions of 8 with and without --distill-focus 1
(focus1-signoff6-s1, base-signoff6-s1). Held-out k of 20 by round, with the mean words; "="
where the served version did not change (the step rejected or held). Run from this folder:

    python3 compare.py
"""
import json, os
here = os.path.dirname(os.path.abspath(__file__))
SOURCES = [('own teacher (recorded)', os.path.join(here, '..', '2026-12-03-fit-tldr-french', 'grid-fit'), 'combine'),
           ('1.5B teacher', os.path.join(here, 'grid-s1'), 'combine'),
           ('1.5B teacher', os.path.join(here, 'pair-s2'), 'combine'),
           ('1.5B teacher, --distill-focus 1', os.path.join(here, 'focus1-s1'), 'focus1'),
           ('1.5B teacher, --distill-focus 1', os.path.join(here, 'pair-s2'), 'focus1'),
           ('own teacher, --distill-focus 1', os.path.join(here, 'own-focus1'), 'focus1'),
           ('1.5B teacher, 6 versions', os.path.join(here, 'base-signoff6-s1'), 'combine'),
           ('1.5B teacher, --distill-focus 1, 6 versions', os.path.join(here, 'focus1-signoff6-s1'), 'focus1')]

def rounds(d, arm):
    """Yields each of arm's runs in d's learn.json (none when it is missing) with its k of 20 by
    round as strings, "=" before a round whose served version did not change."""
    p = os.path.join(d, 'learn.json')
    if not os.path.exists(p):
        return
    for run in json.load(open(p))['runs']:
        if run['arm'] != arm:
            continue
        ev, ks = run['evals'], []
        for i, e in enumerate(ev):
            same = i > 0 and e['policy_version'] == ev[i - 1]['policy_version']
            ks.append(('=' if same else '') + str(e['satisfied']))
        yield run, ks


def main():
    rows = {}
    for label, d, arm in SOURCES:
        for run, ks in rounds(d, arm):
            ev = run['evals']
            rows.setdefault(label, []).append((run['persona'], run['seed'], ks, ev[-1]['satisfied'], ev[-1]['mean_words'],
                                               ev[-1]['retention_right'], ev[-1]['retention_asked']))
    for label, rs in rows.items():
        print(label)
        for persona, seed, ks, last, words, rr, ra in sorted(rs, key=lambda r: (r[1], r[0])):
            print(f"  {persona:8s} seed {seed}  {','.join(ks):16s} last {last:2d}  words {words:5.1f}  retention {rr}/{ra}")
    print()
    print('concise and signoff at v3, by seed:')
    for label, rs in rows.items():
        if '6 versions' in label:
            continue
        by = {}
        for persona, seed, ks, last, *_ in rs:
            if persona in ('concise', 'signoff'):
                by.setdefault(seed, 0)
                by[seed] += last
        print(f"  {label:32s} " + '  '.join(f"seed {s}: {k}/40" for s, k in sorted(by.items())))


if __name__ == '__main__':
    main()
