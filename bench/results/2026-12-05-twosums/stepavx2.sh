#!/bin/bash
# The f32 LoRA step at SmolLM2-135M's shape (BenchmarkTrainStep/smollm2-135m/lora, 16 × 190 tokens, r16) beside torch + PEFT,
# as an AVX2-only CPU would run both (ours: CLAWRL_AVX512=0, fp32 backward; torch: ATEN_CPU_CAPABILITY=avx2,
# ONEDNN_MAX_CPU_ISA=AVX2, MKL_ENABLE_INSTRUCTIONS=AVX2), alternating with this Xeon's defaults (bf16 backward on AMX, torch unrestricted).
cd /work/main/train
export CLAWRL_PYTHON=$HOME/.cache/clawrl/torch-venv/bin/python CLAWRL_BENCH_TORCH_LOGITS=response
for i in 1 2; do
  echo "== avx2 $i $(date -u +%T)"
  CLAWRL_AVX512=0 CLAWRL_AMX=0 CLAWRL_BENCH_PRECISION=fp32 ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 MKL_ENABLE_INSTRUCTIONS=AVX2 \
    nice -n 5 /work/runs/train-new.test -test.run '^$' -test.bench 'TrainStep/smollm2' -test.benchtime 1x -test.timeout 1h 2>&1 | grep -E "Benchmark|torch reference"
  echo "== default $i $(date -u +%T)"
  CLAWRL_BENCH_PRECISION=bf16 nice -n 5 /work/runs/train-new.test -test.run '^$' -test.bench 'TrainStep/smollm2' -test.benchtime 1x -test.timeout 1h 2>&1 | grep -E "Benchmark|torch reference"
done
