#!/bin/bash
cd /work/main/train
for b in ${BINS:-old new2 old new2 old new2}; do
  echo "== $b $(date +%T)"
  CLAWRL_BENCH_PRECISION=bf16 nice -n 5 /work/runs/train-$b.test -test.run '^$' -test.bench 'TrainStep/smollm2' -test.benchtime 1x -test.timeout 1h 2>&1 | grep Benchmark
done
