#!/bin/bash
# Decode and prefill of Qwen2.5-Coder-1.5B-Instruct Q4_K_M (the demo model's teacher, the
# Combined row's student) on an AVX2-only CPU (a Zen 3: no AVX-512, no AVX-VNNI), before
# (OLD) and after (NEW) the AVX2 Q4_K/Q6_K kernels with int16 sums and their two-token
# forms, alternated twice, at 1, 2, 4 and 8 sequences decoded together; then NEW beside
# llama.cpp (xllamacpp's AVX2 wheel, LLAMA: its python) at 1 and 4.
#   OLD, NEW: clawrl binaries (go build -o … ./cmd/clawrl at each commit)
M=${M:-$HOME/.cache/clawrl/models/Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf}
run() { # label binary batch
  printf '%s B=%s ' "$1" "$3"
  "$2" bench model --model "$M" --prompt 64 --decode 32 --batch "$3" 2>&1 | awk '/^  clawrl/{print "prefill", $2, "decode×1", $3, "decode×B", $4}'
}
echo "== $(date -u +%H:%M:%S) part 1: old and new alternated"
for r in 1 2; do
  for B in 1 2 4 8; do
    run old "$OLD" $B
    run new "$NEW" $B
  done
done
if [ -n "$LLAMA" ]; then
  echo "== $(date -u +%H:%M:%S) part 2: new beside llama.cpp"
  for B in 1 4; do
    "$NEW" bench model --model "$M" --prompt 64 --decode 32 --batch $B --llamacpp "$LLAMA" 2>&1 | tail -n 8
  done
fi
echo "== $(date -u +%H:%M:%S) done"
