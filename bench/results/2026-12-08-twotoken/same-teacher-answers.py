# The teacher's answers in three bursts (burst/NAME: AVX-512 VNNI, AVX2 alone, AVX-VNNI), read
# from each run's teacher store (the runs' data folders, not kept here: BENCHMARKS.md says where
# they ran): for each of the 16 hinted prompts, whether one answer has the same text, token ids
# and log-probability bits in all three.
#   python3 same-teacher-answers.py DIR/new-c8 DIR/avx2-c8 DIR/avxvnni-c8
import collections, hashlib, sqlite3, sys
runs = sys.argv[1:]
data = []
for run in runs:
    d = collections.defaultdict(set)
    for pt, rt, lp, rid in sqlite3.connect(f"{run}/data/teacher/clawrl.db").execute(
            "select prompt_text, response_text, behaviour_logprobs, response_ids from turn_payloads"):
        d[pt].add((rt, hashlib.sha1(lp or b"").hexdigest(), hashlib.sha1(rid or b"").hexdigest()))
    data.append(d)
prompts = set.intersection(*(set(d) for d in data))
same = sum(1 for p in prompts if set.intersection(*(d[p] for d in data)))
print(f"{len(prompts)} prompts in all runs; {same} with an answer the same in all (text, ids, log-probability bits)")
