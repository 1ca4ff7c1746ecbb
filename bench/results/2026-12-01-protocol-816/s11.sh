#!/bin/bash
run() { BIN=$1; P=$2; S=$3; NAME=$4; VERS=$5; PER=$6; shift 6
OUT=/work/runs/s42/$NAME
mkdir -p $OUT
nice -n 5 $BIN bench learn --model qwen2.5-coder-1.5b --personas $P --versions $VERS --per-version $PER --first-seed $S \
  --arms "combine-t15:combine:--teacher-url={teacher}:--teacher-model=clawrl:--teacher-select-relevance:--teacher-select-length=fit:--teacher-select-quoted" --teacher-serve qwen2.5-coder-1.5b \
  --serve-arg=--teacher-samples=4 --serve-arg=--lr=5e-4 --serve-arg=--gate-backtrack=2 --version-timeout 20m --keep-data "$@" --out $OUT > $OUT/run.log 2>&1
}
A="--serve-arg=--teacher-select-opening=0.5"
H="--serve-arg=--hold-liked=0.75"
V="--serve-arg=--rehearsal-avoid --serve-arg=--rehearsal-avoid-wrong --serve-arg=--rehearsal-avoid-bound=2"
T="--serve-arg=--hold-train-disliked"
# tldr seed 2 with --hold-train-disliked (bin-s42u: a thinned step's liked answers leave with its version, and its step is shrunk to its share of a full one), paired with s9's tldr seed 2 to its first held step
run /work/runs/bin-s42u tldr 2 tldr-816-relfitqgo-hold-traindis-avoidwrong-s2 8 16 $A $H $V $T
