#!/usr/bin/env python3
"""Per served version of a signoff run: held-out answers satisfied, looping
the sign-off (said three times in a row), cut at the token limit, and ending
with it. Usage: heldout.py RUN_DIR..."""
import json, re, sys

for run in sys.argv[1:]:
    r = json.load(open(f"{run}/learn.json"))["runs"][0]
    print(run)
    for i, e in enumerate(r["evals"]):
        ho = e["held_out"]
        loops = sum(bool(re.search(r"(hope this helps!?\s*){3}", h["text"].lower())) for h in ho)
        cut = sum(not h["finished"] for h in ho)
        ends = sum(h["text"].strip().endswith("Hope this helps!") for h in ho)
        print(f"  v{i}: satisfied {e['satisfied']:2d}/{len(ho)}  loop {loops:2d}  cut {cut:2d}  end with it {ends:2d}")
