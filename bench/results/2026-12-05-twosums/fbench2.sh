#!/bin/bash
cd /work/main/quant
for rep in 1 2; do
for b in old new seq b1; do
  echo "== $b rep $rep"
  nice -n 5 /work/runs/quant-$b.test -test.run '^$' -test.bench 'F32Activations/(head|gate).*/T=(1|2|4)/(f32|f32avx2)$' -test.benchtime 0.4s 2>&1 | grep -E 'cpu-ns'
done
done
