#!/bin/bash
# Alternates the old (4 partial sums) and new (2 partial sums) quant test binaries on BenchmarkF32Activations.
cd /work/main/quant
for rep in 1 2; do
for b in old new; do
  echo "== $b rep $rep"
  nice -n 5 /work/runs/quant-$b.test -test.run '^$' -test.bench 'F32Activations/.*/T=(1|2|4|8|16|32|190)/(f32|f32avx2)$' -test.benchtime 0.4s 2>&1 | grep -E 'cpu-ns'
done
done
