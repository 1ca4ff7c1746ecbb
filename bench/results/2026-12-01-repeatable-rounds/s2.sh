#!/bin/bash
# the arm with --hold-liked 0.75 with followed anchors that keep their end (bin-s36)

run() { BIN=$1; P=$2; S=$3; NAME=$4; shift 4
OUT=/work/runs/s36/$NAME
mkdir -p $OUT
nice -n 5 $BIN bench learn --model qwen2.5-coder-1.5b --personas $P --versions 6 --first-seed $S \
  --arms "combine-t15:combine:--teacher-url={teacher}:--teacher-model=clawrl:--teacher-select-relevance:--teacher-select-length=fit:--teacher-select-quoted" --teacher-serve qwen2.5-coder-1.5b \
  --serve-arg=--teacher-samples=4 --serve-arg=--lr=5e-4 --serve-arg=--gate-backtrack=2 --version-timeout 20m --keep-data "$@" --out $OUT > $OUT/run.log 2>&1
}
A="--serve-arg=--teacher-select-opening=0.5"
while kill -0 20204 2>/dev/null; do sleep 20; done
# french seed 2 (v4–v6 rejected for a fact said wrongly in French under the arm and with hold): followed anchors, ended ones keeping their stop token
run /work/runs/bin-s36 french 2 french-15-relfitqgo-hold-follow-s2 $A --serve-arg=--hold-liked=0.75 --serve-arg=--rehearsal-follow-hint
