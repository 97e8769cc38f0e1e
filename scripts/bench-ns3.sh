#!/usr/bin/env bash
# Speed of txop against a lean ns-3 program of the same scenarios, measured so that a busy
# machine cannot inflate the ratio (issue 31): single runs of the two, interleaved pair by
# pair on this machine.
#
# Usage: scripts/bench-ns3.sh [--pairs K] [dcf|tcp|steady|bss4 ...]
#   --pairs K  pairs per point (default 5)
#   dcf, tcp, steady, bss4  only these scenarios (default all four)
#
# Scenarios (txop's groups in crates/txop-sim/benches/saturated.rs, and their ns-3
# counterparts in bench/ns3/, whose header comments list every difference):
#   dcf    dcf_11a_54M_1500B: 802.11a 54 Mbit/s, legacy DCF, 1500-byte payloads, n
#          saturated uplink stations, one simulated second; n = 5, 10, 20, 50.
#   tcp    tcp_1down_ht20_mcs7_linux616, start-up: HT20 MCS 7, one TCP CUBIC download
#          per station from a server behind the AP (1 Gbit/s, 1 ms) plus a ping, ten
#          simulated seconds from the handshake on (mostly slow start); n = 1, 4, 16.
#          txop's rrul group (8 TCP flows and 4 probes per station) is timed in the same
#          pairs and set against the same ns-3 runs, as the README's rrul table does.
#   steady the same two, steady state: 30 simulated seconds timed after 5 s of traffic
#          (a flent test spends 60 s at full rate); n = 1, 4, 16.
#   bss4   bss4_tcp_1down_ht20_mcs7_linux616 (issue 15): four BSSs on one HT20 MCS 7
#          channel, APs at the corners of a 20 m square, n stations on a 5 m ring around
#          each, one TCP CUBIC download per station, ten simulated seconds, no frame
#          capture; bench/ns3/bss4.cc's header gives the topology. n = 4, 16 per BSS.
#
# Method. For every point, K pairs in turn (A B A B …): A is one run of txop's scenario,
# B one run of the ns-3 program; each pair gives a ratio (ns-3 wall-s per simulated s /
# txop's), and the table gives the median ratio with its min–max. A load that comes and
# goes then hits both sides of a pair alike, instead of the ns-3 runs of one block (tens
# of seconds) against a criterion estimate of another; the median drops a pair that was
# unlucky. The load average (/proc/loadavg) is printed before and after (and its highest
# 1-minute figure between pairs); the script warns when the machine's load is above 1 or
# when a row's ratios spread (max − min) by more than 25 % of their median. The load is
# the 1-minute figure before the first pair; between pairs and after the last, the
# script's own benchmark keeps one process runnable, which the figure counts, so one is
# taken off it there (others' load above 1: a figure above 2). The pairs, their order and
# everything concluded from them are scripts/bench_ns3.py's (`measure` and `report`), which
# python/tests/test_bench_ns3.py checks with made-up timings; this script builds the two
# programs and calls it.
#
# txop's side is one process per run: the criterion bench binary (release profile, fat
# LTO: `cargo bench --no-run`) in its one-shot mode, `saturated --one GROUP N`, which
# builds and runs the exact scenario of the criterion group once and times itself.
# Chosen over timing criterion per pair because a criterion estimate takes ~7 s of
# repeated runs with caches warm and cannot be interleaved run for run with ns-3; a
# single run in a fresh process pays what an ns-3 run pays (cold caches, first
# allocations), so both sides are measured alike. Timing conventions, the same for both
# sides (each program times itself):
#   start-up (dcf, tcp, bss4)  building the simulation, running it, tearing it down
#        (txop's drop; ns-3's Simulator::Destroy). Left out: the process start (loading
#        libns3 or the binary) and, in ns-3, a warm-up before the traffic (association,
#        block-ack sessions opened one link at a time), which txop's model has no
#        counterpart of.
#   steady  only the 30 timed simulated seconds: from the moment the run reaches 5 s of
#        traffic to the moment it reaches 35 s; building, warm-ups and tear-down left out.
# The table gives wall-seconds per simulated second of each (medians of the pairs), the
# ratio, and the throughput each simulated (payload Mbit/s; TCP goodput for the TCP
# scenarios, over the timed 30 s for steady) so that a reader can check both simulate
# comparable things.
#
# Needs cargo, python3, g++, pkg-config and Debian's libns3-dev (ns-3 3.37 on bookworm);
# when libns3-dev is missing and this runs as root with apt-get, it installs libns3-dev,
# g++ and pkg-config (as scripts/setup.sh does for its packages; the tests do not need
# ns-3, so setup.sh does not install it). The ns-3 programs are built into
# <target>/ns3/ by bench/ns3/build.sh. Raw lines of the run go to <target>/ns3/last-run.txt.
set -euo pipefail

cd "$(dirname "$0")/.."

usage="usage: scripts/bench-ns3.sh [--pairs K] [dcf|tcp|steady|bss4 ...]"
pairs=5
scenarios=()
while [ $# -gt 0 ]; do
    case $1 in
        --pairs)
            pairs=${2:-}
            shift
            [ $# -eq 0 ] || shift
            ;;
        dcf | tcp | steady | bss4) scenarios+=("$1"); shift ;;
        *)
            echo "bench-ns3: unknown argument '$1' ($usage)" >&2
            exit 2
            ;;
    esac
done
if ! [[ $pairs =~ ^[1-9][0-9]*$ ]]; then
    echo "bench-ns3: --pairs needs a positive whole number" >&2
    exit 2
fi
[ "${#scenarios[@]}" -gt 0 ] || scenarios=(dcf tcp steady bss4)

if ! pkg-config --exists ns3-wifi 2>/dev/null || ! command -v g++ >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ]; then
        echo "bench-ns3: installing libns3-dev, g++ and pkg-config from Debian" >&2
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libns3-dev g++ pkg-config >/dev/null
    else
        echo "bench-ns3: error: ns-3 (libns3-dev) or g++ missing; install them as root: apt-get install libns3-dev g++ pkg-config" >&2
        exit 2
    fi
fi

target_dir=$(cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
ns3_dir="$target_dir/ns3"
bench/ns3/build.sh "$ns3_dir"
echo "bench-ns3: building txop's benchmark binary (release profile, fat LTO)" >&2
txop=$(cargo bench -q -p txop-sim --bench saturated --no-run --message-format=json |
    python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "saturated" and m.get("executable"):
        print(m["executable"])')
if [ ! -x "$txop" ]; then
    echo "bench-ns3: error: cargo built no saturated bench binary" >&2
    exit 1
fi

log="$ns3_dir/last-run.txt"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD 2>/dev/null || commit="$commit+dirty"
echo "# ns-3 $(pkg-config --modversion ns3-core), $(nproc) cores, commit $commit, $(date -u +%FT%TZ)" >"$log"
python3 scripts/bench_ns3.py measure --txop "$txop" --ns3-dir "$ns3_dir" --pairs "$pairs" \
    --log "$log" "${scenarios[@]}"
python3 scripts/bench_ns3.py report "$log"
