#!/bin/bash
# Peak resident memory of the 1.5B student's serve process over the first two versions of the
# protocol (french seed 3, serve's defaults, --versions 2), old binary then new; a watcher reads
# VmHWM of every `serve` process of the run every 2 s and keeps each one's last reading.
#   $B/clawrl-old: `go build ./cmd/clawrl` at 3ccb99a; $B/clawrl-new: at this round's head
B=${B:-/work/runs}
OUT=${OUT:-/work/runs/peak}
mkdir -p "$OUT"
for b in old new; do
  nice -n 5 "$B/clawrl-$b" bench learn --target=defaults --personas french --seeds 1 --first-seed 3 --versions 2 \
    --out "$OUT/$b" > "$OUT/$b.log" 2>&1 &
  run=$!
  declare -A peak=()
  while kill -0 $run 2>/dev/null; do
    for p in $(pgrep -f "clawrl-$b serve"); do
      arm=$(tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null | grep -oE 'data-[a-z0-9-]+' | head -1)
      hwm=$(awk '/VmHWM/ {print $2}' /proc/$p/status 2>/dev/null)
      [ -n "$hwm" ] && [ -n "$arm" ] && peak[$arm]=$hwm
    done
    sleep 2
  done
  for a in "${!peak[@]}"; do echo "$b $a VmHWM ${peak[$a]} kB"; done
  unset peak
  grep -E "wait_s|evaluated" "$OUT/$b.log" | grep -oE "arm=[a-z]+|round=[0-9]+|satisfied=[0-9]+|wait_s=[0-9.e-]+" | paste - - - - 
done
