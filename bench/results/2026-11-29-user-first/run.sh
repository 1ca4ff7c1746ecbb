#!/bin/bash
# run.sh BIN OUT SEED PERSONAS METHOD [extra serve args...]: the signoff setting (Qwen2.5-Coder-0.5B student,
# 1.5B teacher best of 4, lr 5e-4, gate backtrack 2, 6 versions of 8 rated turns) on PERSONAS with --method METHOD
# (../2026-11-28-relevance/run.sh is this with METHOD combine)
BIN=$1; OUT=$2; SEED=$3; PERS=$4; METHOD=$5; shift 5
EXTRA=""
for a in "$@"; do EXTRA="$EXTRA:$a"; done
mkdir -p $OUT
nice -n 5 $BIN bench learn --model qwen2.5-coder-0.5b --personas $PERS --versions 6 --first-seed $SEED \
  --arms "$METHOD-t15:$METHOD:--teacher-url={teacher}:--teacher-model=clawrl$EXTRA" --teacher-serve qwen2.5-coder-1.5b \
  --serve-arg=--teacher-samples=4 --serve-arg=--lr=5e-4 --serve-arg=--gate-backtrack=2 --keep-data --out $OUT > $OUT/run.log 2>&1
