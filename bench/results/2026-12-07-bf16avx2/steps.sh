#!/bin/bash
# The 1.5B's QLoRA step (16 × 190 tokens, r16) with the backward's products through frozen
# weights in float32 and in bf16 (on this CPU: the AVX2 kernel), alternated, one warm-up step
# each; then the SmolLM2-shaped LoRA step (issue 11 item 4's shape, random weights) the same way.
#   go test -c -o $B/train-avx2.test ./train     (from the repository root)
B=${B:-/work/runs}
cd "$(dirname "$0")/../../../train"
q15=$HOME/.cache/clawrl/models/Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf
one() { # precision warmup bench
  echo "== $1 warmup=$2 $3 $(date -u +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg)"
  CLAWRL_BENCH_TORCH=0 CLAWRL_BENCH_WARMUP=$2 CLAWRL_BENCH_PRECISION=$1 CLAWRL_DEMO_GGUF=$q15 \
    /usr/bin/time -f "wall %e s, user %U s, sys %S s, max RSS %M KB" \
    nice -n 5 $B/train-avx2.test -test.run '^$' -test.bench "$3" -test.benchtime 1x -test.timeout 1h -test.v 2>&1 | grep -E "^Benchmark|wall|bf16 backward"
}
for p in fp32 bf16 fp32 bf16; do one $p 1 'QLoRAStep/quant$'; done
for p in fp32 bf16 fp32 bf16; do one $p 0 'TrainStep/smollm2'; done
