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
# taken off it there (others' load above 1: a figure above 2).
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
: >"$log"
load() { cut -d' ' -f1-3 /proc/loadavg; }
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD 2>/dev/null || commit="$commit+dirty"
echo "# ns-3 $(pkg-config --modversion ns3-core), $(nproc) cores, commit $commit, $(date -u +%FT%TZ)" >>"$log"
echo "load-start $(load)" >>"$log"

# point MODE N NS3_ARGS GROUP...: K pairs, each one run of txop's GROUP/N for every GROUP
# then one of the ns-3 program (NS3_ARGS: program and its arguments but --n).
point() {
    local mode=$1 n=$2 ns3_args=$3 group k line
    shift 3
    local groups=("$@") txop_args=()
    [ "$mode" != steady ] || txop_args=(--warmup-s 5 --seconds 30)
    for ((k = 1; k <= pairs; k++)); do
        echo "bench-ns3: $mode n=$n: pair $k of $pairs" >&2
        echo "load-pair $(load)" >>"$log"
        for group in "${groups[@]}"; do
            if line=$("$txop" --one "$group" "$n" "${txop_args[@]}" 2>"$ns3_dir/stderr.txt"); then
                echo "$line mode=$mode pair=$k" >>"$log"
            else
                echo "failed side=txop group=$group n=$n mode=$mode pair=$k: $(tail -n 1 "$ns3_dir/stderr.txt")" >>"$log"
            fi
        done
        # shellcheck disable=SC2086 # NS3_ARGS is a program and its flags
        if line=$("$ns3_dir"/$ns3_args --n="$n" 2>"$ns3_dir/stderr.txt"); then
            echo "$line mode=$mode pair=$k" >>"$log"
        else
            echo "failed side=ns3 group=${groups[0]} n=$n mode=$mode pair=$k: $(tail -n 1 "$ns3_dir/stderr.txt")" >>"$log"
        fi
    done
}

tcp_groups=(tcp_1down_ht20_mcs7_linux616 rrul_ht20_mcs7_linux616)
for s in "${scenarios[@]}"; do
    case $s in
        dcf) for n in 5 10 20 50; do point start-up "$n" dcf dcf_11a_54M_1500B; done ;;
        tcp) for n in 1 4 16; do point start-up "$n" tcp "${tcp_groups[@]}"; done ;;
        steady) for n in 1 4 16; do
            point steady "$n" "tcp --traffic-warmup=5 --seconds=30" "${tcp_groups[@]}"
        done ;;
        bss4) for n in 4 16; do point start-up "$n" bss4 bss4_tcp_1down_ht20_mcs7_linux616; done ;;
    esac
done
echo "load-end $(load)" >>"$log"

python3 - "$log" <<'EOF'
import statistics
import sys
from collections import defaultdict

# txop's rrul group is set against the ns-3 runs of the one-download scenario.
NS3_OF = {"rrul_ht20_mcs7_linux616": "tcp_1down_ht20_mcs7_linux616"}
TITLES = {
    ("start-up", "dcf_11a_54M_1500B"): "802.11a 54 Mbit/s DCF, 1500 B, saturated uplink, 1 simulated s",
    ("start-up", "tcp_1down_ht20_mcs7_linux616"):
        "HT20 MCS 7, one TCP download per station + ping, 10 simulated s from the handshake",
    ("start-up", "rrul_ht20_mcs7_linux616"):
        "txop: rrul on every station (8 TCP + 4 probes), 10 s from the start; ns-3: the one-download runs above",
    ("steady", "tcp_1down_ht20_mcs7_linux616"):
        "Steady state: one TCP download per station + ping, 30 simulated s timed after 5 s of traffic",
    ("steady", "rrul_ht20_mcs7_linux616"):
        "Steady state: txop rrul on every station, 30 s timed after 5 s; ns-3: the one-download runs above",
    ("start-up", "bss4_tcp_1down_ht20_mcs7_linux616"):
        "4 BSSs x n stations in space, HT20 MCS 7, one TCP download per station (+ ping in txop), "
        "10 simulated s, no capture",
}
SPREAD_MAX = 0.25
LOAD_MAX = 1.0


def fields(line):
    return dict(f.split("=", 1) for f in line.split()[1:] if "=" in f)


# (side, mode, group, n) -> pair -> (wall-s per simulated s, Mbit/s)
runs = defaultdict(dict)
failed = []
notes = []
loads = {}
pair_loads = []
with open(sys.argv[1]) as f:
    for line in f:
        line = line.strip()
        if line.startswith("#"):
            notes.append(line)
            continue
        kind = line.split()[0]
        if kind.startswith("load-"):
            one_min = line.split()[1:]
            if kind == "load-pair":
                pair_loads.append(float(one_min[0]))
            else:
                loads[kind] = one_min
            continue
        if kind == "failed":
            failed.append(line)
            continue
        d = fields(line)
        key = (kind, d["mode"], d["group"], int(d["n"]))
        runs[key][int(d["pair"])] = (float(d["wall_s"]) / float(d["sim_s"]),
                                     float(d["throughput_mbps"]))

for note in notes:
    print(note)
start, end = loads.get("load-start", ["?"] * 3), loads.get("load-end", ["?"] * 3)
print(f"load average (1, 5, 15 min): {' '.join(start)} before, {' '.join(end)} after"
      + (f"; highest 1-min between pairs {max(pair_loads):.2f}" if pair_loads else ""))
warnings = []
# The benchmark keeps one process runnable from the first pair on: take it off.
others = [float(start[0])] + [x - 1 for x in pair_loads[1:] + [float(end[0])]]
if max(others) > LOAD_MAX:
    warnings.append(f"the 1-minute load average of other processes reached {max(others):.2f} "
                    f"(> {LOAD_MAX:g}): the machine was not quiet; do not quote these figures")

for (mode, group), title in TITLES.items():
    keys = sorted(k for k in runs if k[0] == "txop" and k[1] == mode and k[2] == group)
    if not keys:
        continue
    print()
    print(f"{title}  [{group}, {mode}]")
    print(f"{'n':>3}  {'txop wall-s/sim-s':>17}  {'ns-3 wall-s/sim-s':>17}  {'ns-3/txop median':>16}"
          f"  {'min-max':>11}  {'spread':>6}  {'txop Mbit/s':>11}  {'ns-3 Mbit/s':>11}  pairs")
    for key in keys:
        n = key[3]
        a = runs[key]
        b = runs.get(("ns3", mode, NS3_OF.get(group, group), n), {})
        both = sorted(set(a) & set(b))
        ratios = [b[k][0] / a[k][0] for k in both]
        txop_s = statistics.median(v[0] for v in a.values())
        txop_m = statistics.median(v[1] for v in a.values())
        if ratios:
            med = statistics.median(ratios)
            spread = (max(ratios) - min(ratios)) / med
            ns3_s = f"{statistics.median(v[0] for v in b.values()):17.4f}"
            ns3_m = f"{statistics.median(v[1] for v in b.values()):11.2f}"
            ratio = f"{med:15.0f}x"
            rng = f"{min(ratios):.0f}-{max(ratios):.0f}x"
            spr = f"{spread * 100:5.0f}%"
            if spread > SPREAD_MAX:
                warnings.append(f"{group} {mode} n={n}: the pairs' ratios spread by "
                                f"{spread * 100:.0f}% (> {SPREAD_MAX * 100:.0f}%)")
        else:
            ns3_s, ns3_m, ratio, rng, spr = f"{'-':>17}", f"{'-':>11}", f"{'-':>16}", "-", "-"
        print(f"{n:>3}  {txop_s:17.6f}  {ns3_s}  {ratio}  {rng:>11}  {spr:>6}  {txop_m:11.2f}"
              f"  {ns3_m}  {len(ratios)}")
for line in failed:
    print(line, file=sys.stderr)
for w in warnings:
    print(f"bench-ns3: warning: {w}", file=sys.stderr)
sys.exit(1 if failed else 0)
EOF
