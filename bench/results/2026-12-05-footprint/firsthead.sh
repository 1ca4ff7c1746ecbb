#!/bin/bash
# First steps (no warm-up) of the 1.5B's QLoRA step: 3ccb99a against 77b5a0e (this round's head then, with the
# vector pair packing), alternated; $B/train-head.test = `go test -c ./train` at 77b5a0e.
B=${B:-/work/runs}
cd "$(dirname "$0")/../../../train"
q15=$HOME/.cache/clawrl/models/Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf
for b in head old head old; do
  echo "== $b $(date -u +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg)"
  CLAWRL_BENCH_PRECISION=bf16 CLAWRL_DEMO_GGUF=$q15 \
    /usr/bin/time -f "wall %e s, user %U s, sys %S s, max RSS %M KB, minor faults %R" \
    nice -n 5 $B/train-$b.test -test.run '^$' -test.bench 'QLoRAStep/quant$' -test.benchtime 1x -test.timeout 1h 2>&1 | grep -E "^Benchmark|wall"
done
