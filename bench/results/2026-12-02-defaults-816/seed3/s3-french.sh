#!/bin/bash
# french seed 3 through `bench learn --target=defaults` on bin-s47 (79b2f7b's tree: --teacher-quoted-retry 4 a default), no flags, the control run too: a third seed of the defaults' protocol
nice -n 5 /work/runs/bin-s47 bench learn --target=defaults --personas french --seeds 1 --first-seed 3 --keep-data \
  --out /work/runs/s47/seed3/french-s3 > /work/runs/s47/seed3/french-s3.log 2>&1
