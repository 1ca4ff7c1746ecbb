#!/bin/bash
# steady-state QLoRA step (1.5B Q4_K_M, bf16 backward, one warm-up step): old5 (9b0cad7 + the warm-up option) and new5 alternating
cd /work/runs/amx
for i in 1 2; do for b in old5 new5; do echo "== $b $i"; BIN=$b ./q15w.sh; done; done
