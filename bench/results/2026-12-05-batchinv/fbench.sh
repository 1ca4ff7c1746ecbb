#!/bin/bash
# BenchmarkF32Activations, old (3676f29) and new binaries alternating
for i in 1 2; do
  for b in old new; do
    echo "== $b run $i"
    ./$b.test -test.run '^$' -test.bench 'F32Activations/.*/T=(1|2|4|16|32|190)/' -test.benchtime 300ms 2>&1 | grep Benchmark | awk '{print $1, $5, $6}'
  done
done
