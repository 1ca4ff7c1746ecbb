#!/bin/bash
# The demo model's default bench learn grid (control + combine, four personas, 3 × 8), two seeds, with two partial sums per block
/usr/bin/time -v ./clawrl-new bench learn --model $HOME/.cache/clawrl/models/SmolLM2-135M-Instruct.Q4_1.gguf --seeds 2 --keep-data --out grid-new > grid-new.log 2>&1
echo rc=$?
