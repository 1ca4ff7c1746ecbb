#!/bin/bash
# BenchmarkQLoRAStep/quant-f32 on the demo GGUF, old (e00b119) and new alternating; run from train/
cd /work/main/train
for i in 1 2; do for b in old new; do
  echo "== $b $i"
  CLAWRL_DEMO_GGUF=$HOME/.cache/clawrl/models/SmolLM2-135M-Instruct.Q4_1.gguf /work/runs/train-$b.test -test.run '^$' -test.bench 'QLoRAStep/quant-f32$' -test.benchtime 1x -test.timeout 1h 2>&1 | grep -E "Benchmark|ok|FAIL"
done; done
