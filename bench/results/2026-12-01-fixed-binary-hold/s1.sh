#!/bin/bash
# the arm with --hold-liked 0.75 on the fixed binary (bin-s38 = 5dc5abb, product code of 713c0a2): the persona/seed pairs not yet run on it
run() { BIN=$1; P=$2; S=$3; NAME=$4; shift 4
OUT=/work/runs/s38/$NAME
mkdir -p $OUT
nice -n 5 $BIN bench learn --model qwen2.5-coder-1.5b --personas $P --versions 6 --first-seed $S \
  --arms "combine-t15:combine:--teacher-url={teacher}:--teacher-model=clawrl:--teacher-select-relevance:--teacher-select-length=fit:--teacher-select-quoted" --teacher-serve qwen2.5-coder-1.5b \
  --serve-arg=--teacher-samples=4 --serve-arg=--lr=5e-4 --serve-arg=--gate-backtrack=2 --version-timeout 20m --keep-data "$@" --out $OUT > $OUT/run.log 2>&1
}
A="--serve-arg=--teacher-select-opening=0.5"
H="--serve-arg=--hold-liked=0.75"
run /work/runs/bin-s38 concise 2 concise-15-relfitqgo-hold-s2 $A $H
run /work/runs/bin-s38 tldr 2 tldr-15-relfitqgo-hold-s2 $A $H
run /work/runs/bin-s38 signoff 1 signoff-15-relfitqgo-hold-s1 $A $H
run /work/runs/bin-s38 french 2 french-15-relfitqgo-hold-s2 $A $H
run /work/runs/bin-s38 signoff 2 signoff-15-relfitqgo-hold-s2 $A $H
