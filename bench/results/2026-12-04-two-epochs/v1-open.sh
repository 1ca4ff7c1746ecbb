#!/bin/bash
# Does serve's first version on tldr refuse the gate's open questions too? The pool's v1 answers
# 104 of 120 tldr held-out prompts with a refusal and keeps all 16 facts, so the gate serves it.
# One version of tldr seed 5 on serve's defaults (--versions 1 --keep-data), then the kept store
# served again (serve resumes at its last version, v1; the control's store under --method off
# serves v0) and asked, greedily, to 64 tokens, the gate's eight open how-to questions
# (loop.DefaultOpen) and three of the held-out prompts (the kept stores record these turns too;
# nothing is rated, so nothing trains). ASK_ONLY=1: the asking alone; PORT: the servers' port.
BIN=${BIN:-/work/runs/bin-s63}   # go build -o "$BIN" ./cmd/clawrl
OUT=${OUT:-/work/runs/s63}
R="$OUT/tldr-s5-v1"
mkdir -p "$OUT"
[ -n "$AFTER" ] && while kill -0 "$AFTER" 2>/dev/null; do sleep 10; done   # a run already under way
[ -z "$ASK_ONLY" ] && nice -n 5 "$BIN" bench learn --target=defaults --personas tldr --seeds 1 --first-seed 5 --keep-data --versions 1 \
  --out "$R" > "$R.log" 2>&1
ask() {  # VERSION-LABEL DATA METHOD
  nice -n 5 "$BIN" serve --model qwen2.5-coder-1.5b --data "$2" --method "$3" --addr 127.0.0.1:${PORT:-30987} > "$R/serve-ask-$1.log" 2>&1 &
  local pid=$!
  until curl -sf 127.0.0.1:${PORT:-30987}/v1/models > /dev/null; do sleep 2; done
  for q in "How do I make a cup of tea?" "How do I tie a tie?" "How can I get better at public speaking?" \
    "How do I fold a fitted sheet?" "How do I clean white sneakers?" "How can I remember people's names?" \
    "How do I paint a room?" "How do I teach a puppy to sit?" \
    "What is the history of the Roman Empire?" "How does the stock market work?" "What is climate change?"; do
    body=$(python3 -c 'import json,sys; print(json.dumps({"model":"clawrl","messages":[{"role":"user","content":sys.argv[1]}],"max_tokens":64,"temperature":0}))' "$q")
    a=$(curl -s 127.0.0.1:${PORT:-30987}/v1/chat/completions -H 'content-type: application/json' -d "$body" |
      python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["choices"][0]["message"]["content"]))')
    echo "$1 | $q | $a"
  done
  kill "$pid"; wait "$pid" 2>/dev/null
}
ask v1 "$R/data-combine-tldr-5" combine > "$R-open.txt"
ask v0 "$R/data-off-tldr-5" off >> "$R-open.txt"
echo done
