#!/bin/bash
# The LoRA step at SmolLM2-135M's shape (16 × 190 tokens, r16) beside torch + PEFT on the Zen 3:
# bf16 (the default, AVX2 + FMA with VDPBF16PS's sums) and fp32, alternated twice.
# TEST: go test -c -o /tmp/train.test ./train at the commit measured; torch + PEFT from ~/.cache/clawrl/torch-venv (scripts/torch-venv).
cd "$(dirname "$0")/../../../train"
for P in bf16 fp32 bf16 fp32; do
  echo "== $P $(date -u +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg)"
  CLAWRL_PYTHON=$HOME/.cache/clawrl/torch-venv/bin/python CLAWRL_BENCH_PRECISION=$P CLAWRL_BENCH_TORCH=1 CLAWRL_BENCH_TORCH_LOGITS=response \
    "${TEST:-./train.test}" -test.run '^$' -test.bench TrainStep/smollm2 -test.benchtime 1x -test.timeout 1h 2>&1 | grep -E '^Benchmark|FAIL|error'
done
