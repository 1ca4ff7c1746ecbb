#!/bin/bash
# SmolLM2 default grid on the defaults branch (--gate-backtrack 2 by default): is the default arm level with main's recorded grid?
nice -n 5 /work/runs/bin-s43d bench learn --model smollm2 --seeds 2 --keep-data --out /work/runs/s43/grid/backtrack > /work/runs/s43/grid/backtrack.log 2>&1
