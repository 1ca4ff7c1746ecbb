#!/bin/bash
# steady-state QLoRA step (1.5B), new6 (AMX Q4_K and Q6_K), twice, the second with a CPU profile
cd /work/runs/amx
BIN=new6 ./q15w.sh
BIN=new6 PROF="-test.cpuprofile /work/runs/amx/new6.prof" ./q15w.sh
