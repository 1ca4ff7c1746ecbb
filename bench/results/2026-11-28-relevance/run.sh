#!/bin/bash
# run.sh BIN OUT SEED PERSONAS [extra serve args...]: the signoff setting (Qwen2.5-Coder-0.5B student,
# 1.5B teacher best of 4, lr 5e-4, gate backtrack 2, 6 versions of 8 rated turns) on PERSONAS, method combine
# (arm combine-t15); ../2026-11-29-user-first/run.sh runs it with the method as an argument.
BIN=$1; OUT=$2; SEED=$3; PERS=$4; shift 4
exec "$(dirname "$0")/../2026-11-29-user-first/run.sh" "$BIN" "$OUT" "$SEED" "$PERS" combine "$@"
