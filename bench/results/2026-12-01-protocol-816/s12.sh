#!/bin/bash
while kill -0 23663 2>/dev/null; do sleep 10; done
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
# after s11.sh: tldr seed 1 with --hold-train-disliked (bin-s42u); its seed-1 run without the flag (bin-s40c) had two top-ups in round 2, so the pair holds to round 1 at least
run /work/runs/bin-s42u tldr 1 tldr-816-relfitqgo-hold-traindis-avoidwrong-s1 8 16 $A $H $V $T
