#!/bin/bash
# The gradient precision of the bf16 backward with and without the AMX tiles (see prec_test.go).
# Run from train/ with ZZ=…/zz.test; writes $OUT/{smol,q15}-{fp32,bf16}-amx{0,1}.bin.
M=${M:-$HOME/.cache/clawrl/models}; OUT=${OUT:-/work/runs}
for c in "fp32 1" "bf16 1" "bf16 0"; do set -- $c
  CLAWRL_AMX=$2 ZZ_GGUF=$M/SmolLM2-135M-Instruct.Q4_1.gguf ZZ_DTYPE=quant-f32 ZZ_PREC=$1 ZZ_OUT=$OUT/smol-$1-amx$2.bin "$ZZ" -test.run ZZPrec
  CLAWRL_AMX=$2 ZZ_GGUF=$M/Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf ZZ_DTYPE=quant ZZ_PREC=$1 ZZ_OUT=$OUT/q15-$1-amx$2.bin "$ZZ" -test.run ZZPrec
done
P=${PY:-python3}
$P cmp.py $OUT/smol-fp32-amx1.bin $OUT/smol-bf16-amx1.bin $OUT/smol-bf16-amx0.bin
$P cmp.py $OUT/q15-fp32-amx1.bin $OUT/q15-bf16-amx1.bin $OUT/q15-bf16-amx0.bin
$P cmp.py $OUT/smol-bf16-amx0.bin $OUT/smol-bf16-amx1.bin
