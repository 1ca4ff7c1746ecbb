#!/bin/bash
# --gate-answers (opt-in): the gate also rejects a version that no longer answers half of its open
# how-to questions (none of the topic's words: "I'm sorry, but I can't assist with that." to "How
# do I make a cup of tea?"), which serve's first tldr version does (v1-open.sh) while keeping every
# fact. PERSONA (tldr) seed SEED (5) on serve's defaults with it, to VERSIONS (4). Sixty-third
# session: tldr 5, then PERSONA=french SEED=2 (does it reject the French the user asked for?).
BIN=${BIN:-/work/runs/bin-s63g}   # go build -o "$BIN" ./cmd/clawrl (77dd91c)
OUT=${OUT:-/work/runs/s63}
T="--teacher-url={teacher}:--teacher-model=clawrl"
P=${PERSONA:-tldr} S=${SEED:-5}
mkdir -p "$OUT"
nice -n 5 "$BIN" bench learn --target=defaults --personas "$P" --seeds 1 --first-seed "$S" --keep-data --versions "${VERSIONS:-4}" \
  --arms "answers:combine:$T:--gate-answers" --out "$OUT/$P-s$S-answers" > "$OUT/$P-s$S-answers.log" 2>&1
echo "$P-s$S-answers done $(date +%T)"
