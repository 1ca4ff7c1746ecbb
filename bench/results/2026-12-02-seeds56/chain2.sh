#!/bin/bash
# after seed 5: a clean-clone CI of main's head (alone), then a sixth seed on the defaults (bin-s51 = b858f7e)
while kill -0 23411 2>/dev/null; do sleep 20; done
rm -rf /tmp/ci50 && git clone -q /work/main /tmp/ci50 && cd /tmp/ci50 && git log --oneline -1 > /tmp/ci50.out && (CI=true bash .ci/run >> /tmp/ci50.out 2>&1; echo rc=$? >> /tmp/ci50.out)
mkdir -p /work/runs/s50/seed6
for P in tldr french concise signoff; do
  nice -n 5 /work/runs/bin-s51 bench learn --target=defaults --personas $P --seeds 1 --first-seed 6 --keep-data \
    --out /work/runs/s50/seed6/$P-s6 > /work/runs/s50/seed6/$P-s6.log 2>&1
done
echo done
