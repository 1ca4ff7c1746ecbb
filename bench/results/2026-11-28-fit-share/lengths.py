"""lengths.py RUN_DIR...: per run of run.sh (a kept store, --keep-data), the
held-out outcome per version (satisfied, cut at the 64-token limit, loops)
and what each version trained on (teacher-written samples, their mean
length in the policy's tokens, and how many ended within 38 and 64 tokens)."""
import glob, json, re, sqlite3, statistics, sys


def loops(t):
    w = re.findall(r"[\w']+", t.lower())
    for n in range(2, 25):
        for i in range(len(w) - 3 * n + 1):
            if w[i:i + n] == w[i + n:i + 2 * n] == w[i + 2 * n:i + 3 * n]:
                return True
    return False


for d in sys.argv[1:]:
    r = json.load(open(f"{d}/learn.json"))
    row = []
    for e in r["runs"][0]["evals"]:
        ho = e["held_out"]
        row.append("v%d:%d/cut%d/loop%d" % (e["policy_version"], e["satisfied"],
                                           sum(not h["finished"] for h in ho), sum(loops(h["text"]) for h in ho)))
    print(d)
    print("  held-out (satisfied/cut/loops of 20):", " ".join(row))
    db = glob.glob(f"{d}/data-combine*/clawrl.db")[0]
    c = sqlite3.connect(db)
    trained = []
    for v, n, t, lens in c.execute("""select trained_version, count(*), sum(teacher_response_ids is not null),
            group_concat(length(teacher_response_ids)/4) from samples where trained_version is not null group by 1 order by 1"""):
        ls = [int(x) for x in (lens or "").split(",") if x]
        m = statistics.mean(ls) if ls else 0
        trained.append("v%d:%d teacher of %d, mean %.0f tok, %d>38, %d>64" % (v, t, n, m, sum(x > 38 for x in ls), sum(x > 64 for x in ls)))
    print("  trained:", "; ".join(trained))
    waiting = c.execute("select count(*) from turns t join judgments j on j.turn_id=t.id where t.state='judged'").fetchone()[0]
    print("  judged turns still waiting for a sample at the end:", waiting)
