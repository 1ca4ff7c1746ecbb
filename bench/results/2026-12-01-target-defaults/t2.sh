#!/bin/bash
# tldr seed 2 under --target with a user who says what the answer missed (--specific-feedback): is tldr's shortfall (11 at v8) the feedback's silence on the 25 words?
nice -n 5 /work/runs/bin-s43b bench learn --target --personas tldr --seeds 1 --first-seed 2 --specific-feedback --arms "$(/work/runs/bin-s43b bench learn --help | grep -o 'combine-best:combine:[^ ]*')" --keep-data \
  --out /work/runs/s43/target/tldr-s2-specific > /work/runs/s43/target/tldr-s2-specific.log 2>&1
