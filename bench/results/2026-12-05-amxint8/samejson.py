#!/usr/bin/env python3
"""Field-by-field difference of two bench learn JSON files (default: the
seventieth session's french seed 3 run and this session's)."""
import json, sys, os
here = os.path.dirname(os.path.abspath(__file__))
a = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, '../2026-12-05-amx/french-s3-amx/learn.json')
b = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, 'french-s3/learn.json')
diffs = []
def walk(x, y, path):
    if type(x) != type(y):
        diffs.append((path, 'type')); return
    if isinstance(x, dict):
        for k in sorted(set(x) | set(y)):
            if k not in x or k not in y:
                diffs.append((path + '/' + k, 'missing')); continue
            walk(x[k], y[k], path + '/' + k)
    elif isinstance(x, list):
        if len(x) != len(y):
            diffs.append((path, 'len %d %d' % (len(x), len(y)))); return
        for i, (u, v) in enumerate(zip(x, y)):
            walk(u, v, path + '[%d]' % i)
    elif x != y:
        diffs.append((path, repr(x)[:60], repr(y)[:60]))
walk(json.load(open(a)), json.load(open(b)), '')
print(len(diffs), 'fields differ')
for d in diffs:
    print(*d)
