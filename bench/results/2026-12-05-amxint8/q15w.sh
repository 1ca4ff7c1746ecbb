#!/bin/bash
# one warm-up step, then one timed (CLAWRL_BENCH_WARMUP=1), with user/system time of the whole run
cd /work/runs/amx
CLAWRL_BENCH_WARMUP=1 CLAWRL_BENCH_PRECISION=bf16 CLAWRL_DEMO_GGUF=$HOME/.cache/clawrl/models/Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf /usr/bin/time -v /work/runs/train-${BIN:-new5}.test -test.run '^$' -test.bench 'QLoRAStep/quant$' -test.benchtime 1x -test.timeout 1h $PROF 2>&1 | grep -E "Benchmark|ok|FAIL|User time|System time|Maximum resident|Minor|Elapsed"
