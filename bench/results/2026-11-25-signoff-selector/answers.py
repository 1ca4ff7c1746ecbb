#!/usr/bin/env python3
# Held-out answers per served version of a learn.json: satisfied, the
# sign-off alone (at most 4 words containing "hope this helps"), the
# sign-off said twice or more (a loop the checker rejects), empty.
import json, re, sys
d = json.load(open(sys.argv[1]))
for r in d['runs']:
    print(f"{r['arm']} {r['persona']} seed {r['seed']}")
    for e in r['evals']:
        a = [h['text'] for h in e.get('held_out') or []] or e['answers']
        hop = [len(re.findall(r'hope this helps', x.lower())) for x in a]
        alone = sum(len(x.split()) <= 4 and h > 0 for x, h in zip(a, hop))
        loop = sum(h >= 2 for h in hop)
        empty = sum(not x.strip() for x in a)
        ex = next((x for x in a if x.strip()), '')
        print(f"  v{e['policy_version']}: {e['satisfied']}/{e['asked']} satisfied, {e['mean_words']:.0f}w, alone {alone}, loop {loop}, empty {empty}; e.g. {json.dumps(ex[:110])}")
