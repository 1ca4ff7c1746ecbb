# par.py URL: four seeded teacher-style writes (temperature 1, 64 tokens) to each of
# three questions under a written critique, first one after another, then all four
# at once; prints each way's wall seconds and whether the answers are the same.
import json, sys, time, urllib.request, concurrent.futures as cf
url = sys.argv[1]
qs = ["What is the capital of Japan?", "How do I boil an egg?", "Why is the sky blue?"]
hint = "Answer in French, please."
def ask(q, seed):
    body = {"model": "clawrl", "messages": [{"role": "user", "content": q + "\n\n" + hint}],
            "max_tokens": 64, "temperature": 1.0, "seed": seed}
    req = urllib.request.Request(url + "/v1/chat/completions", json.dumps(body).encode(),
                                 {"Content-Type": "application/json", "X-Turn-Type": "side"})
    return json.load(urllib.request.urlopen(req, timeout=600))["choices"][0]["message"]["content"]
ask(qs[0], 99)  # warm up
for q in qs:
    t = time.time(); seq = [ask(q, s) for s in range(4)]; ts = time.time() - t
    t = time.time()
    with cf.ThreadPoolExecutor(4) as ex:
        par = list(ex.map(lambda s: ask(q, s), range(4)))
    tp = time.time() - t
    print(f"{q!r}: one after another {ts:.1f} s, at once {tp:.1f} s ({ts/tp:.2f}x); same answers: {seq == par}; tokens ~{sum(len(a.split()) for a in seq)} words")
