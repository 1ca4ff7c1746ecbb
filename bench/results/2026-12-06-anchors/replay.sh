#!/bin/bash
# Replays one training step of a kept learning run (bench learn --keep-data) with other serve
# flags: copies the arm's data folder with the versions before V (hard links), marks the samples
# version V trained as ready again (every later turn dropped) and forgets V and later versions, starts `clawrl serve` on the
# copy with serve's defaults plus the flags given, waits for the step, and asks the run's 20
# held-out questions greedily (64 tokens), scored as the french persona does. From the
# repository root:
#
#   go build -o /tmp/clawrl ./cmd/clawrl
#   BIN=/tmp/clawrl bash bench/results/2026-12-06-anchors/replay.sh SRC 5 OUT [serve flags...]
#
# The rehearsal's state (the answers the gate caught that are pushed down, and the round robins)
# comes with version V-1's folder (rehearsal.json) from binaries of 2026-12-06 on; a run made
# before kept it only in memory, and its replay pushes nothing down. The running baseline is
# read from the store, so copy the source soon after its step V (before later ratings).
set -e
SRC=$(realpath "$1"); V=$2; OUT=$3; shift 3
BIN=${BIN:-clawrl}
rm -rf "$OUT"; mkdir -p "$OUT/versions"; OUT=$(realpath "$OUT")
python3 -c 'import sqlite3, sys; sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True).backup(sqlite3.connect(sys.argv[2]))' "$SRC/clawrl.db" "$OUT/clawrl.db"
for d in "$SRC"/versions/v*; do
  n=$((10#${d##*/v}))
  if [ "$n" -lt "$V" ]; then cp -al "$d" "$OUT/versions/"; fi
done
python3 - "$OUT/clawrl.db" "$SRC" "$OUT" "$V" <<'PY'
import sqlite3, sys
db, src, out, v = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
c = sqlite3.connect(db)
c.execute("update versions set dir = replace(dir, ?, ?)", (src, out))
c.execute("delete from versions where version >= ?", (v,))
# trained -> ready is no transition the store allows; lift its trigger for this one update
(trig,) = c.execute("select sql from sqlite_master where type = 'trigger' and name = 'turns_state_machine'").fetchone()
# turns of later rounds (the source may still be running) would join the step: drop them
n = c.execute("update turns set state = 'dropped' where type = 'main' and state in ('generated', 'observed', 'judged', 'ready')").rowcount
print("later turns dropped:", n)
c.execute("drop trigger turns_state_machine")
c.execute("update turns set state = 'ready' where id in (select turn_id from samples where trained_version >= ?)", (v,))
c.execute(trig)
n = c.execute("update samples set trained_version = 0 where trained_version >= ?", (v,)).rowcount
c.commit()
print("samples made ready again:", n)
PY
PORT=$((20000 + RANDOM % 20000))
"$BIN" serve --data "$OUT" --addr 127.0.0.1:$PORT --method combine --batch-size 16 --log-level info \
  --model qwen2.5-coder-1.5b "$@" > "$OUT/serve.log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null' EXIT
for i in $(seq 600); do
  if grep -q "trained version.*version=$V \|version $V rejected\|rejected.*version=$V " "$OUT/serve.log"; then break; fi
  kill -0 $PID || { tail -5 "$OUT/serve.log"; exit 1; }
  sleep 2
done
sleep 3
grep -h "retention check\|trained version\|rejected" "$OUT/serve.log" | cut -c1-400
python3 - "$SRC/clawrl.db" $PORT > "$OUT/heldout.jsonl" <<'PY'
import sqlite3, sys, json, urllib.request
db, port = sys.argv[1], sys.argv[2]
c = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
qs = [json.loads(m)[-1]["content"] for (m,) in c.execute(
    "select p.messages from turns t join turn_payloads p on p.turn_seq = t.seq "
    "where t.type = 'side' and t.policy_version = 0 order by t.seq")]
for q in qs:
    if q.startswith("What is the capital of"):
        continue  # the retention questions
    body = json.dumps({"model": "clawrl", "messages": [{"role": "user", "content": q}],
                       "max_tokens": 64, "temperature": 0}).encode()
    req = urllib.request.Request("http://127.0.0.1:%s/v1/chat/completions" % port, body,
                                 {"Content-Type": "application/json", "X-Turn-Type": "side"})
    a = json.load(urllib.request.urlopen(req, timeout=600))["choices"][0]["message"]["content"]
    print(json.dumps({"q": q, "a": a}))
PY
go run ./bench/results/2026-12-06-anchors/_french < "$OUT/heldout.jsonl"
