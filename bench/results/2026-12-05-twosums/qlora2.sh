#!/bin/bash
# BenchmarkQLoRAStep/quant-f32 on the demo GGUF with the bf16 backward serve runs here, old (e00b119) and new alternating, three times
cd /work/main/train
for i in 1 2 3; do for b in old new; do
  echo "== $b $i"
  CLAWRL_BENCH_PRECISION=bf16 CLAWRL_DEMO_GGUF=$HOME/.cache/clawrl/models/SmolLM2-135M-Instruct.Q4_1.gguf /work/runs/train-$b.test -test.run '^$' -test.bench 'QLoRAStep/quant-f32$' -test.benchtime 1x -test.timeout 1h 2>&1 | grep -E "Benchmark|ok|FAIL"
done; done
