#!/bin/bash
# Decode speed of Qwen2.5-Coder-1.5B-Instruct Q4_K_M (the demo model's teacher, the
# Combined row's student) at 1-8 sequences decoded together, before and after the
# two-token Q4_K/Q6_K kernels, alternated; then the AVX-VNNI kernels against AVX2 on
# the same binary (CLAWRL_AVX512=0 keeps the int8 products off AVX-512, as on Intel's
# client CPUs; CLAWRL_AVXVNNI=0 keeps them on AVX2 alone, as on a Zen 3).
#   OLD, NEW: clawrl binaries (go build -o … ./cmd/clawrl at each commit)
M=${M:-$HOME/.cache/clawrl/models/Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf}
run() { # label env binary batch
  printf '%s B=%s ' "$1" "$4"
  env $2 "$3" bench model --model "$M" --prompt 64 --decode 32 --batch "$4" 2>&1 | awk '/^  clawrl/{print "prefill", $2, "decode×1", $3, "decode×B", $4}'
}
echo "== $(date -u +%H:%M:%S) part 1: AVX-512 VNNI (the defaults), old and new alternated"
for r in 1 2; do
  for B in 1 2 3 4; do
    run old "" "$OLD" $B
    run new "" "$NEW" $B
  done
done
echo "== $(date -u +%H:%M:%S) part 2: CLAWRL_AVX512=0, AVX2 alone and AVX-VNNI alternated (new binary)"
for r in 1 2; do
  for B in 1 2 4 8; do
    run avx2 "CLAWRL_AVX512=0 CLAWRL_AVXVNNI=0" "$NEW" $B
    run avxvnni "CLAWRL_AVX512=0" "$NEW" $B
  done
done
echo "== $(date -u +%H:%M:%S) done"
