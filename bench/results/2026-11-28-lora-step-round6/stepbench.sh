#!/bin/bash
# usage: stepbench.sh LABEL BINARY PRECISION TORCH(1/0)
cd /work/wt-speed2/train
label=$1 bin=$2 prec=$3 torch=$4
echo "== $label $bin precision=$prec torch=$torch start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg) avail $(free -g | awk '/Mem/{print $7}')G"
if [ "$torch" = 1 ]; then
  CLAWRL_PYTHON=$HOME/.cache/clawrl/torch-venv/bin/python CLAWRL_BENCH_TORCH_LOGITS=response CLAWRL_BENCH_PRECISION=$prec nice -n 10 $bin -test.run '^$' -test.bench 'TrainStep/smollm2' -test.benchtime 1x -test.timeout 1h 2>&1 | grep -v '^goos\|^goarch\|^pkg\|^cpu'
else
  CLAWRL_BENCH_TORCH=0 CLAWRL_BENCH_PRECISION=$prec nice -n 10 $bin -test.run '^$' -test.bench 'TrainStep/smollm2' -test.benchtime 1x -test.timeout 1h 2>&1 | grep -v '^goos\|^goarch\|^pkg\|^cpu\|torch reference not run\|^--- BENCH\|^PASS'
fi
echo "== end $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
