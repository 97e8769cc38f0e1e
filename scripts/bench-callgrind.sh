#!/usr/bin/env bash
# Instruction counts of two fixed CLI runs under callgrind: the speed guard for
# refactors (CONTRIBUTING.md: at most 5 % above the previous figure).
#
# Usage: scripts/bench-callgrind.sh [TXOP_BINARY]
#
# Runs `txop run bench/callgrind/{rrul,tcp_1down}.toml --json` (one HT20 MCS 7 station,
# Linux 6.16, 10 simulated seconds) under `valgrind --tool=callgrind` and prints the
# instructions executed (Ir) of each. Counts are deterministic to within a few
# thousand instructions, so one run each is enough. Needs valgrind (apt: valgrind).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-}
if [ -z "$bin" ]; then
    cargo build --release -q -p txop
    bin=target/release/txop
fi
command -v valgrind >/dev/null || { echo "bench-callgrind: valgrind not found (apt install valgrind)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for run in rrul tcp_1down; do
    valgrind --tool=callgrind --callgrind-out-file="$out/$run.out" \
        "$bin" run "bench/callgrind/$run.toml" --json >"$out/$run.json" 2>"$out/$run.log"
    ir=$(awk '/^summary:/ {print $2}' "$out/$run.out")
    printf '%-10s %14s instructions  (%.1f M)\n' "$run" "$ir" "$(echo "$ir / 1000000" | bc -l)"
done
