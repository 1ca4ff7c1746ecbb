#!/bin/bash
# The LoRA step at SmolLM2-135M's shape before and after this round's
# kernels (LoRA's rank-16 products, the six-row forward kernel), alternated
# in one window, torch + PEFT beside the first four (run from the repo root).
#   old.test: `go test -c ./train` at afdec11 (the sixty-seventh session's end)
#   new.test: the same at this round's last kernel commit
# B: the folder holding both binaries.
set -e
cd train
py=$HOME/.cache/clawrl/torch-venv/bin/python
run() { # binary torch?
  echo "== $1 torch=$2 $(date -u +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg)"
  CLAWRL_BENCH_PRECISION=bf16 CLAWRL_BENCH_TORCH=$2 CLAWRL_PYTHON=$py CLAWRL_BENCH_TORCH_LOGITS=response \
    $B/$1 -test.run '^$' -test.bench 'TrainStep/smollm2' -test.benchtime 1x -test.timeout 1h 2>&1 | grep Benchmark
}
run new.test 1
run old.test 1
run new.test 1
run old.test 1
run new.test 0
run old.test 0
run new.test 0
run old.test 0
