#!/bin/bash
while pgrep -f "bench learn" >/dev/null; do sleep 15; done
rm -rf /tmp/ci17 && git clone -q /work/main /tmp/ci17 && cd /tmp/ci17 && git log --oneline | head -1 > /tmp/ci17.log && date >> /tmp/ci17.log && (CI=true bash .ci/run >> /tmp/ci17.log 2>&1; echo "rc=$?" >> /tmp/ci17.log); date >> /tmp/ci17.log
# then the second seed of the three personas under 8 anchors
/work/main/bench/results/2026-11-28-relevance/run.sh /work/runs/bin-fresh /work/runs/reh8-3p-seed2 2 signoff,tldr,concise --rehearsal=8
