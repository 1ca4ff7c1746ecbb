#!/bin/bash
# Peak resident memory (VmHWM) of each serve process of the 1.5B protocol's first two versions
# (french seed 3, serve's defaults, --versions 2): watch.sh reads VmHWM of every `serve` of the
# run every 2 s and keeps each one's last reading (servepeak.sh's watcher matched no folder).
#   $B/clawrl-old: `go build ./cmd/clawrl` at 3ccb99a; $B/clawrl-new: at this round's head
# Usage: servepeak2.sh old|new ...
B=${B:-/work/runs}
OUT=${OUT:-/work/runs/peak}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
for b in "$@"; do
  nice -n 5 "$B/clawrl-$b" bench learn --target=defaults --personas french --seeds 1 --first-seed 3 --versions 2 \
    --out "$OUT/$b" > "$OUT/$b.log" 2>&1 &
  sleep 1
  "$here/watch.sh" "clawrl-$b" "$OUT/peak-$b.txt"
  wait
  cat "$OUT/peak-$b.txt"
  grep -E "evaluated" "$OUT/$b.log" | grep -oE "arm=[a-z]+ persona=[a-z]+ seed=[0-9]+ round=[0-9]+( version=[0-9]+)? satisfied=[0-9]+|wait_s=[0-9.e-]+" | paste -s -d' '
done
