#!/usr/bin/env python3
"""The issue's protocol (8 x 16, the 1.5B coder its own teacher) on serve's defaults:
the eight runs (four personas x two seeds) pooled per round, with Wilson 95 % intervals.
Run from bench/results; with --retry, signoff and tldr are the runs with
--teacher-quoted-retry 4 (concise and french quote nothing, so the retry
cannot act on them and their runs stand); with --seed3, the seed-3 runs of
the defaults (the retry a default) found in seed3/ are added; with --rollback,
tldr's three seeds are the runs with --rollback-drop 0.3 (2026-12-02-rollback/);
with --seed4, the fourth seed's runs found in 2026-12-02-rollback/seed4/;
with --seeds56, the fifth and sixth seeds' runs found in 2026-12-02-seeds56/
(run with the rollback on by default, so none of them needs replacing);
with --fit, signoff's six seeds are the runs with --teacher-fit-retry 4 (see below)."""
import json, math, os, sys

def pool_runs(argv, root="."):
    """The pooled runs, (persona, seed) -> folder under root (bench/results), for the flags in argv."""
    runs = {
        ("concise", 1): "2026-12-02-avoid-default/target-concise-s1-defaults",
        ("concise", 2): "2026-12-02-avoid-default/target-concise-s2-defaults",
        ("signoff", 1): "2026-12-02-avoid-default/target-signoff-s1-defaults-memlimit",
        ("signoff", 2): "2026-12-02-defaults-816/signoff-s2-defaults",
        ("tldr", 1): "2026-12-02-defaults-816/tldr-s1-defaults",
        ("tldr", 2): "2026-12-02-hold-default/target-tldr-s2-defaults",
        ("french", 1): "2026-12-02-avoid-default/target-french-s1-defaults",
        ("french", 2): "2026-12-02-avoid-default/target-french-s2-defaults-avoid",
    }
    if "--retry" in argv:
        for persona in ("signoff", "tldr"):
            for seed in (1, 2):
                runs[(persona, seed)] = f"2026-12-02-defaults-816/{persona}-s{seed}-retry"
    if "--seed3" in argv:
        for persona in ("concise", "signoff", "tldr", "french"):
            folder = f"2026-12-02-defaults-816/seed3/{persona}-s3"
            if os.path.exists(os.path.join(root, folder, "learn.json")):
                runs[(persona, 3)] = folder

    if "--rollback" in argv:
        # tldr with --rollback-drop 0.3 (2026-12-02-rollback/); the other
        # personas' runs never met the rule (drops.py there), so they stand.
        for seed in (1, 2, 3):
            runs[("tldr", seed)] = f"2026-12-02-rollback/tldr-s{seed}-rollback"
    if "--rollback-default" in argv:
        # --rollback-drop 0.6, the default: of the runs above it fires only in
        # tldr seed 3, at the same step as 0.3 (the same run); elsewhere the
        # defaults' runs stand.
        runs[("tldr", 3)] = "2026-12-02-rollback/tldr-s3-rollback"
    if "--seed4" in argv:
        for persona in ("concise", "signoff", "tldr", "french"):
            folder = f"2026-12-02-rollback/seed4/{persona}-s4"
            if os.path.exists(os.path.join(root, folder, "learn.json")):
                runs[(persona, 4)] = folder
    if "--seeds56" in argv:
        for seed in (5, 6):
            for persona in ("concise", "signoff", "tldr", "french"):
                folder = f"2026-12-02-seeds56/seed{seed}/{persona}-s{seed}"
                if os.path.exists(os.path.join(root, folder, "learn.json")):
                    runs[(persona, seed)] = folder

    if "--fit" in argv:
        # --teacher-fit-retry 4, a default since the fifty-first session: under
        # its quoted scope it writes again only turns whose feedback quotes
        # words the answer says past the budget, signoff's alone of the four
        # personas (tldr's "TL;DR:" comes first, concise and french quote
        # nothing), so signoff's six seeds are the runs in 2026-12-03-quoted-fit/
        # and the others' runs stand.
        for seed in range(1, 7):
            runs[("signoff", seed)] = f"2026-12-03-quoted-fit/signoff-s{seed}"
    return runs

def wilson(k, n, z=1.959964):
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return c - h, c + h

if __name__ == "__main__":  # pool_runs() is shared with ../2026-12-03-single-binary/compare.py
    RUNS = pool_runs(sys.argv)
    rounds, control = {}, {}
    for (persona, seed), folder in RUNS.items():
        r = json.load(open(folder + "/learn.json"))
        run = next(x for x in r["runs"] if x["method"] != "off")
        assert run["persona"] == persona and run["seed"] == seed, folder
        line = []
        for e in run["evals"]:
            k, n, ret, rn = rounds.get(e["round"], (0, 0, 0, 0))
            rounds[e["round"]] = (k + e["satisfied"], n + e["asked"], ret + e["retention_right"], rn + e["retention_asked"])
            line.append(f"v{e['policy_version']}:{e['satisfied']}")
        print(f"{persona:8s} seed {seed}: {' '.join(line)}")
        off = next((x for x in r["runs"] if x["method"] == "off"), None)
        if off is not None:  # the control: the base model, at the last round
            e = off["evals"][-1]
            control[(persona, seed)] = (e["satisfied"], e["asked"])
    for rd, (k, n, ret, rn) in sorted(rounds.items()):
        lo, hi = wilson(k, n)
        print(f"round {rd}: {k}/{n} = {k/n:.2f} [{lo:.2f}, {hi:.2f}]  retention {ret}/{rn}")
    k, n = sum(c[0] for c in control.values()), sum(c[1] for c in control.values())
    if n:
        print(f"control (the runs that have one, {len(control)} of {len(RUNS)}): {k}/{n}")
