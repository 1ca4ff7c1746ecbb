#!/usr/bin/env python3
"""Compares the --quick runs' learn.json here, all fields but timings and paths:
q-new1 and q-new2 (3f5a100, two partial sums per block) against each other and
against ../2026-12-05-batchinv/q-new4 (a14d918, four partial sums)."""
import json, os

here = os.path.dirname(os.path.abspath(__file__))


def load(d):
    with open(os.path.join(here, d, "learn.json")) as f:
        return json.load(f)


def strip(o):
    skip = ("time", "wait", "_s", "seconds", "elapsed", "date", "duration", "dir", "path", "command")
    if isinstance(o, dict):
        return {k: strip(v) for k, v in o.items() if not any(s in k for s in skip)}
    if isinstance(o, list):
        return [strip(v) for v in o]
    return o


def diff(x, y, p=""):
    if type(x) is not type(y):
        return [p]
    if isinstance(x, dict):
        out = []
        for k in sorted(set(x) | set(y)):
            out += [p + "/" + k] if k not in x or k not in y else diff(x[k], y[k], p + "/" + k)
        return out
    if isinstance(x, list):
        if len(x) != len(y):
            return [p + " (length)"]
        return [d for i, (u, v) in enumerate(zip(x, y)) for d in diff(u, v, "%s/%d" % (p, i))]
    return [] if x == y else [p]


runs = {d: strip(load(d)) for d in ("q-new1", "q-new2", "../2026-12-05-batchinv/q-new4")}
for a, b in (("q-new1", "q-new2"), ("q-new1", "../2026-12-05-batchinv/q-new4")):
    d = diff(runs[a], runs[b])
    print("%s vs %s: %d fields differ%s" % (a, b, len(d), (": " + ", ".join(d[:8]) + (" …" if len(d) > 8 else "")) if d else ""))
