#!/bin/bash
# watch.sh BIN OUTFILE: keep the last VmHWM of every "BIN serve" process by its --data folder
declare -A peak=()
while pgrep -f "$1 bench" >/dev/null; do
  for p in $(pgrep -f "$1 serve"); do
    arm=$(tr '\0' '\n' < /proc/$p/cmdline 2>/dev/null | grep -A1 -x -- --data | tail -1 | sed -E 's#.*/##; s/-[0-9]+$//')
    hwm=$(awk '/VmHWM/ {print $2}' /proc/$p/status 2>/dev/null)
    [ -n "$hwm" ] && [ -n "$arm" ] && peak[$arm]=$hwm
  done
  sleep 2
done
for a in "${!peak[@]}"; do echo "$1 $a VmHWM ${peak[$a]} kB"; done > "$2"
