#!/usr/bin/env python3
"""Compares the --quick runs' learn.json here, all fields but timings and paths:
q-new1, q-new2 (5aac160) and q-new4 (a14d918) against each other and against
q-old1 (3676f29, before the batch-invariant kernels)."""
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


def report(pairs):
    """Prints, for each pair of run folders (relative to this one), the fields that differ."""
    runs = {d: strip(load(d)) for pair in pairs for d in pair}
    for a, b in pairs:
        d = diff(runs[a], runs[b])
        print("%s vs %s: %d fields differ%s" % (a, b, len(d), (": " + ", ".join(d[:8]) + (" …" if len(d) > 8 else "")) if d else ""))


if __name__ == "__main__":
    report((("q-new1", "q-new2"), ("q-new1", "q-new4"), ("q-new1", "q-old1")))
