#!/bin/bash
# perf record -g of one first QLoRA step (1.5B, no warm-up), then the top symbols with call chains (perf1.txt)
cd /work/runs/amx
CLAWRL_BENCH_PRECISION=bf16 CLAWRL_DEMO_GGUF=$HOME/.cache/clawrl/models/Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf perf record -g -o perf1.data /work/runs/train-new6.test -test.run '^$' -test.bench 'QLoRAStep/quant$' -test.benchtime 1x
perf report -i perf1.data --no-children --sort sym --stdio | grep -v "^#" | grep "%" | head -60
