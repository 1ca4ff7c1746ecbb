#!/bin/bash
# signoff seed 1 through `bench learn --target=defaults` on bin-s47 (the working tree with --teacher-quoted-retry 4 as serve's default): the arm gets no retry flag, so it should repeat t13.sh's run (signoff-s1-retry, the flag given) answer for answer; the control runs too
nice -n 5 /work/runs/bin-s47 bench learn --target=defaults --personas signoff --seeds 1 --first-seed 1 --keep-data \
  --out /work/runs/s47/target/signoff-s1-default-retry > /work/runs/s47/target/signoff-s1-default-retry.log 2>&1
