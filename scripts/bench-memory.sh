#!/usr/bin/env bash
# Memory benchmark: peak memory (max RSS) of one run at 60 s and at 3000 s simulated,
# side by side, for the bloated and the 6.16 stack. Memory should not grow with
# simulated time: queues are bounded, summaries are histograms of fixed size, and the
# time series and sample lists are capped (docs/results.md, "Long runs").
#
# Usage: scripts/bench-memory.sh [TXOP_BINARY]
#   (default: builds and uses target/release/txop; DURATIONS="60 3000" overrides the
#   simulated seconds, e.g. DURATIONS="60 3000 12000")
#
# The run: 100 HT20 MCS7 stations, each sent 6 Mbit/s of UDP (600 Mbit/s offered to a
# cell that carries about 60: 10x overload), with a 100-byte probe every 100 ms beside
# each stream; `--json` to /dev/null, so the peak includes building the results and
# their JSON. Max RSS from GNU time (`/usr/bin/time -f %M`, the kernel's getrusage
# ru_maxrss of the run).
set -euo pipefail
cd "$(dirname "$0")/.."
durations=${DURATIONS:-60 3000}
if [ ! -x /usr/bin/time ]; then
    echo "bench-memory: /usr/bin/time (GNU time) missing: apt-get install time" >&2
    exit 2
fi
if [ $# -ge 1 ]; then
    txop=$1
    [ -x "$txop" ] || { echo "bench-memory: $txop: not an executable" >&2; exit 2; }
else
    cargo build --release -q -p txop
    txop=$(cargo metadata --format-version 1 --no-deps |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/release/txop
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/overload.toml" <<'EOF'
name = "bench-memory"
description = "100 stations, 10x UDP overload, sparse probes"
[stations]
count = 100
mcs = 7
[traffic]
kind = "cbr"
direction = "downlink"
rate_mbps = 6
probe_interval_ms = 100
EOF

# Max RSS (KB) and wall time (s) of one run.
peak() {
    /usr/bin/time -f "%M %e" -o "$work/time" \
        "$txop" run "$work/overload.toml" --set "stack=$1" --set "duration_s=$2" --json \
        > /dev/null
    cat "$work/time"
}

printf '%-20s' "stack"
for d in $durations; do printf '%16s' "${d} s: MB"; done
printf '%12s\n' "last/first"
for stack in linux-4.8-bloated linux-6.16; do
    printf '%-20s' "$stack"
    first=""
    for d in $durations; do
        read -r kb wall < <(peak "$stack" "$d")
        printf '%16s' "$(awk -v k="$kb" -v w="$wall" 'BEGIN { printf "%.1f (%.0f s)", k / 1024, w }')"
        first=${first:-$kb}
        last=$kb
    done
    awk -v a="$first" -v b="$last" 'BEGIN { printf "%12.2f\n", b / a }'
done
echo "(peak resident memory; in brackets the wall-clock time of the run)"
