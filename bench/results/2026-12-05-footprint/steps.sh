#!/bin/bash
# The 1.5B's QLoRA step (16 × 190 tokens, r16, bf16 backward) before and
# after this round, alternated: first steps (no warm-up: widening the frozen
# weights, first touch of the workspace), then steady steps (one untimed
# warm-up step), then the SmolLM2-shaped LoRA step (item 4's shape).
#   $B/train-old.test: `go test -c ./train` at 3ccb99a; $B/train-new.test: at this round's head
B=${B:-/work/runs}
cd "$(dirname "$0")/../../../train"
q15=$HOME/.cache/clawrl/models/Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf
one() { # binary warmup bench
  echo "== $1 warmup=$2 $3 $(date -u +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg)"
  CLAWRL_BENCH_WARMUP=$2 CLAWRL_BENCH_PRECISION=bf16 CLAWRL_DEMO_GGUF=$q15 \
    /usr/bin/time -f "wall %e s, user %U s, sys %S s, max RSS %M KB, minor faults %R" \
    nice -n 5 $B/train-$1.test -test.run '^$' -test.bench "$3" -test.benchtime 1x -test.timeout 1h 2>&1 | grep -E "^Benchmark|wall"
}
for b in old new old new; do one $b 0 'QLoRAStep/quant$'; done
for b in old new old new; do one $b 1 'QLoRAStep/quant$'; done
for b in old new old new old new; do one $b 0 'TrainStep/smollm2'; done
