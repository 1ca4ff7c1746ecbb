#!/usr/bin/env python3
"""A person's pace against `clawrl serve`'s first version (issue 11: "the first version serves
within 2 minutes of the 16th rated turn on the demo model").

Sends 16 turns, one at a time, to a running server: a question, the answer, then a 👎 with the
signoff user's written feedback, and PAUSE seconds of reading before the next question. Then
polls /healthz until the served version is 1 and prints how long after the 16th rating it came.
Standard library only. Usage (the server started beforehand, e.g. `clawrl serve --data D`):

    python3 paced.py http://127.0.0.1:30000 [PAUSE]
"""
import json, sys, time, urllib.request

BASE = sys.argv[1].rstrip("/")
PAUSE = float(sys.argv[2]) if len(sys.argv) > 2 else 10.0
FEEDBACK = 'Be brief. Your last words must be "Hope this helps!"'
QUESTIONS = [
    "How do I boil an egg?", "How do I water a cactus?", "How do I make rice on the stove?",
    "How do I clean a cast iron pan?", "How do I start running?", "How do I write a thank-you note?",
    "How do I remove a coffee stain?", "How do I keep basil alive?", "How do I sharpen a pencil without a sharpener?",
    "How do I fall asleep faster?", "How do I pack for a weekend trip?", "How do I store fresh bread?",
    "How do I wash a wool sweater?", "How do I learn to juggle?", "How do I make iced tea?",
    "How do I plan a picnic?",
]


def post(path, body):
    req = urllib.request.Request(BASE + path, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as r:
        return json.load(r)


def version():
    with urllib.request.urlopen(BASE + "/healthz", timeout=30) as r:
        return json.load(r).get("policy_version", 0)


start = time.time()
for i, q in enumerate(QUESTIONS):
    t = time.time()
    out = post("/v1/chat/completions", {"messages": [{"role": "user", "content": q}], "max_tokens": 64})
    post("/v1/feedback", {"id": out["id"], "rating": -1, "text": FEEDBACK})
    print(f"turn {i+1:2d} at {t-start:6.1f}s: answered in {time.time()-t:4.1f}s", flush=True)
    if i + 1 < len(QUESTIONS):
        time.sleep(PAUSE)
last = time.time()
while version() < 1:
    time.sleep(1)
print(f"version 1 served {time.time()-last:.1f}s after the 16th rating (pause {PAUSE:g}s, {last-start:.0f}s of turns)")
