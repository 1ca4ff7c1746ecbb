#!/bin/bash
# the arm with --hold-liked 0.75 with --hold-liked 0.75; top-ups of exactly the lack (bin-s37)

run() { BIN=$1; P=$2; S=$3; NAME=$4; shift 4
OUT=/work/runs/s36/$NAME
mkdir -p $OUT
nice -n 5 $BIN bench learn --model qwen2.5-coder-1.5b --personas $P --versions 6 --first-seed $S \
  --arms "combine-t15:combine:--teacher-url={teacher}:--teacher-model=clawrl:--teacher-select-relevance:--teacher-select-length=fit:--teacher-select-quoted" --teacher-serve qwen2.5-coder-1.5b \
  --serve-arg=--teacher-samples=4 --serve-arg=--lr=5e-4 --serve-arg=--gate-backtrack=2 --version-timeout 20m --keep-data "$@" --out $OUT > $OUT/run.log 2>&1
}
A="--serve-arg=--teacher-select-opening=0.5"
while kill -0 21195 2>/dev/null; do sleep 20; done
# does a run repeat once the user tops up exactly what the step lacks? tldr seed 1 (topped up under bin-s35) twice
run /work/runs/bin-s37 tldr 1 tldr-15-relfitqgo-hold-lack-s1 $A --serve-arg=--hold-liked=0.75
run /work/runs/bin-s37 tldr 1 tldr-15-relfitqgo-hold-lack-s1-again $A --serve-arg=--hold-liked=0.75
# then a lever paired against it: the loop's default lr 1e-3 (the arm's is 5e-4)
run /work/runs/bin-s37 tldr 1 tldr-15-relfitqgo-hold-lack-lr1e3-s1 $A --serve-arg=--hold-liked=0.75 --serve-arg=--lr=1e-3
