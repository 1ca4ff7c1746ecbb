#!/bin/bash
# signoff seed 2 with --rehearsal-follow-hint on bin-s34 (69d44d0: a brief followed anchor is kept, "Madrid. Hope this helps!")

run() { BIN=$1; P=$2; S=$3; NAME=$4; shift 4
OUT=/work/runs/s34/$NAME
mkdir -p $OUT
nice -n 5 $BIN bench learn --model qwen2.5-coder-1.5b --personas $P --versions 6 --first-seed $S \
  --arms "combine-t15:combine:--teacher-url={teacher}:--teacher-model=clawrl:--teacher-select-relevance:--teacher-select-length=fit:--teacher-select-quoted" --teacher-serve qwen2.5-coder-1.5b \
  --serve-arg=--teacher-samples=4 --serve-arg=--lr=5e-4 --serve-arg=--gate-backtrack=2 --version-timeout 20m --keep-data "$@" --out $OUT > $OUT/run.log 2>&1
}
A="--serve-arg=--teacher-select-opening=0.5"
run /work/runs/bin-s34 signoff 2 signoff-15-relfitqgo-follow2-s2 $A --serve-arg=--rehearsal-follow-hint
