#!/bin/bash
# The LoRA step at SmolLM2-135M's shape before and after the AMX kernel,
# alternated in one window, torch + PEFT beside each (run from the repo root).
#   old.test: `go test -c ./train` at ca876f4 (before the AMX kernel)
#   new.test: the same at the AMX kernel's commit
set -e
cd train
py=$HOME/.cache/clawrl/torch-venv/bin/python
run() { # binary precision torch?
  echo "== $1 $2 torch=$3 $(date -u +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg)"
  CLAWRL_BENCH_PRECISION=$2 CLAWRL_BENCH_TORCH=$3 CLAWRL_PYTHON=$py CLAWRL_BENCH_TORCH_LOGITS=response \
    $B/$1 -test.run '^$' -test.bench 'TrainStep/smollm2' -test.benchtime 1x -test.timeout 1h 2>&1 | grep Benchmark
}
run new.test bf16 1
run old.test bf16 1
run new.test bf16 1
run old.test bf16 1
run new.test fp32 0
run new.test bf16 0
run old.test bf16 0
