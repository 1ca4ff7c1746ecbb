#!/bin/bash
# tldr seed 2 under the protocol on serve's defaults plus --teacher-quoted-retry 4 (bin-s46: --target=defaults and the retry; the arm given, so no control arm is run: the control is recorded)
nice -n 5 /work/runs/bin-s46 bench learn --target=defaults --personas tldr --seeds 1 --first-seed 2 \
  --arms "combine:combine:--teacher-url={teacher}:--teacher-model=clawrl:--teacher-quoted-retry=4" --keep-data \
  --out /work/runs/s46/target/tldr-s2-retry > /work/runs/s46/target/tldr-s2-retry.log 2>&1
