#!/bin/bash
# run.sh BIN OUT SEED [extra serve args...]: the signoff learning command of
# ../2026-11-28-signoff-stores/run.sh, run from that folder as these runs were.
exec bash "$(dirname "$0")/../2026-11-28-signoff-stores/run.sh" "$@"
