#!/usr/bin/env bash
# Speed of txop against a lean ns-3 program of the same scenarios, measured back to back
# in one run on this machine.
#
# Usage: scripts/bench-ns3.sh [--runs K] [dcf|tcp|bss4 ...]
#   --runs K        ns-3 runs per point (default 3; their mean is reported)
#   dcf, tcp, bss4  only these scenarios (default all three)
#
# Scenarios (txop's criterion groups in crates/txop-sim/benches/saturated.rs, and their
# ns-3 counterparts in bench/ns3/, whose header comments list every difference):
#   dcf  dcf_11a_54M_1500B: 802.11a 54 Mbit/s, legacy DCF, 1500-byte payloads, n
#        saturated uplink stations, one simulated second; n = 5, 10, 20, 50.
#   tcp  tcp_1down_ht20_mcs7_linux616: HT20 MCS 7, one TCP CUBIC download per station
#        from a server behind the AP (1 Gbit/s, 1 ms) plus a ping, ten simulated
#        seconds from the handshake on; n = 1, 4, 16. txop's rrul group (8 TCP flows and
#        4 probes per station) is timed at the same points and set against the same
#        ns-3 runs, as the README's rrul table does.
#   bss4 bss4_tcp_1down_ht20_mcs7_linux616 (issue 15): four BSSs on one HT20 MCS 7
#        channel, APs at the corners of a 20 m square, n stations on a 5 m ring around
#        each, log-distance path loss (exponent 3.5), one TCP CUBIC download per station
#        from a server behind its AP, ten simulated seconds, no frame capture (ns-3
#        3.37's default); bench/ns3/bss4.cc's header gives the topology exactly. txop's
#        side is the criterion group of that name (txop's stations also ping, as in
#        tcp). n = 4, 16 per BSS.
#
# For every point of dcf and tcp, in turn: txop's criterion benchmark of that point alone (`cargo bench
# -p txop-sim --bench saturated -- '^GROUP/N$'`, release profile with fat LTO), then K
# runs of the ns-3 program. Timing conventions:
#   txop  criterion's mean time per iteration, divided by the simulated seconds of an
#         iteration; an iteration builds the simulation, runs it and summarises it.
#   ns-3  wall time the program measures itself: building the simulation, the simulated
#         traffic, Simulator::Destroy. Left out: the process start (loading libns3) and
#         a warm-up before the traffic (association, and in tcp the block-ack sessions
#         opened one link at a time), which txop's model has no counterpart of.
# The table gives wall-seconds per simulated second of each, the ratio ns-3 / txop, and
# the throughput each simulated (payload Mbit/s; TCP goodput for tcp) so that a reader
# can check both simulate comparable things.
#
# Needs cargo, python3, g++, pkg-config and Debian's libns3-dev (ns-3 3.37 on bookworm);
# when libns3-dev is missing and this runs as root with apt-get, it installs libns3-dev,
# g++ and pkg-config (as scripts/setup.sh does for its packages; the tests do not need
# ns-3, so setup.sh does not install it). The ns-3 programs are built into
# <target>/ns3/ by bench/ns3/build.sh. Raw lines of the run go to <target>/ns3/last-run.txt.
set -euo pipefail

cd "$(dirname "$0")/.."

runs=3
scenarios=()
while [ $# -gt 0 ]; do
    case $1 in
        --runs)
            runs=${2:-}
            shift
            [ $# -eq 0 ] || shift
            ;;
        dcf | tcp | bss4) scenarios+=("$1"); shift ;;
        *)
            echo "bench-ns3: unknown argument '$1' (usage: scripts/bench-ns3.sh [--runs K] [dcf|tcp|bss4 ...])" >&2
            exit 2
            ;;
    esac
done
if ! [[ $runs =~ ^[1-9][0-9]*$ ]]; then
    echo "bench-ns3: --runs needs a positive whole number" >&2
    exit 2
fi
[ "${#scenarios[@]}" -gt 0 ] || scenarios=(dcf tcp bss4)

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
echo "bench-ns3: building txop's benchmark (release profile, fat LTO)" >&2
cargo bench -q -p txop-sim --bench saturated --no-run

log="$ns3_dir/last-run.txt"
: >"$log"
echo "# ns-3 $(pkg-config --modversion ns3-core), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) at start, $(date -u +%FT%TZ)" >>"$log"

# point N PROGRAM GROUP...: txop's criterion benchmark of every GROUP/N, then K runs of
# the ns-3 program (whose lines name the first GROUP).
point() {
    local n=$1 prog=$2 out group
    shift 2
    local groups=("$@")
    echo "bench-ns3: n=$n: txop (criterion: ${groups[*]})" >&2
    out=$(cargo bench -q -p txop-sim --bench saturated -- "^($(IFS='|'; echo "${groups[*]}"))/$n\$" 2>&1)
    for group in "${groups[@]}"; do
        grep "^txop-throughput group=$group n=$n " <<<"$out" >>"$log"
        local est="$target_dir/criterion/$group/$n/new/estimates.json"
        echo "txop-time group=$group n=$n mean_ns=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["mean"]["point_estimate"])' "$est")" >>"$log"
    done
    for ((k = 1; k <= runs; k++)); do
        echo "bench-ns3: n=$n: ns-3 $prog, run $k of $runs" >&2
        if ! "$ns3_dir/$prog" --n="$n" >>"$log" 2>"$ns3_dir/stderr.txt"; then
            echo "ns3-failed group=${groups[0]} n=$n: $(tail -n 1 "$ns3_dir/stderr.txt")" >>"$log"
        fi
    done
}

for s in "${scenarios[@]}"; do
    case $s in
        dcf) for n in 5 10 20 50; do point "$n" dcf dcf_11a_54M_1500B; done ;;
        tcp) for n in 1 4 16; do
            point "$n" tcp tcp_1down_ht20_mcs7_linux616 rrul_ht20_mcs7_linux616
        done ;;
        bss4) for n in 4 16; do point "$n" bss4 bss4_tcp_1down_ht20_mcs7_linux616; done ;;
    esac
done
echo "# load $(cut -d' ' -f1-3 /proc/loadavg) at the end" >>"$log"

python3 - "$log" <<'EOF'
import sys
from collections import defaultdict

# Simulated seconds per iteration of txop's groups (TCP_SECS in saturated.rs).
SIM_S = {
    "dcf_11a_54M_1500B": 1,
    "tcp_1down_ht20_mcs7_linux616": 10,
    "rrul_ht20_mcs7_linux616": 10,
    "bss4_tcp_1down_ht20_mcs7_linux616": 10,
}
# txop's rrul group is set against the ns-3 runs of the one-download scenario.
NS3_OF = {"rrul_ht20_mcs7_linux616": "tcp_1down_ht20_mcs7_linux616"}
TITLES = {
    "dcf_11a_54M_1500B": "802.11a 54 Mbit/s DCF, 1500 B, saturated uplink, 1 simulated s",
    "tcp_1down_ht20_mcs7_linux616": "HT20 MCS 7, one TCP download per station + ping, 10 simulated s",
    "rrul_ht20_mcs7_linux616": "txop: rrul on every station (8 TCP + 4 probes); ns-3: the one-download runs above",
    "bss4_tcp_1down_ht20_mcs7_linux616": "4 BSSs x n stations in space, HT20 MCS 7, one TCP download per station "
    "(+ ping in txop), 10 simulated s, no capture",
}


def fields(line):
    return dict(f.split("=", 1) for f in line.split()[1:] if "=" in f)


txop_s, txop_mbps = {}, {}
ns3_s, ns3_mbps = defaultdict(list), defaultdict(list)
# Goodput of each BSS in the multi-BSS runs: (group, n) -> BSS name -> runs.
ns3_bss_mbps = defaultdict(lambda: defaultdict(list))
failed = defaultdict(list)
notes = []
with open(sys.argv[1]) as f:
    for line in f:
        if line.startswith("#"):
            notes.append(line.strip())
            continue
        kind = line.split()[0]
        if kind == "ns3-failed":
            g, n = line.split()[1:3]
            failed[(g.split("=")[1], int(n.split("=")[1].rstrip(":")))].append(line.strip())
            continue
        d = fields(line)
        key = (d["group"], int(d["n"]))
        if kind == "txop-time":
            txop_s[key] = float(d["mean_ns"]) / 1e9 / SIM_S[d["group"]]
        elif kind == "txop-throughput":
            txop_mbps[key] = float(d["throughput_mbps"])
        elif kind == "ns3":
            ns3_s[key].append(float(d["wall_s"]) / float(d["sim_s"]))
            ns3_mbps[key].append(float(d["throughput_mbps"]))
            for name, value in d.items():
                if name.startswith("bss") and name.endswith("_mbps"):
                    ns3_bss_mbps[key][name[: -len("_mbps")]].append(float(value))

for note in notes:
    print(note)
for group in SIM_S:
    keys = sorted(k for k in set(txop_s) | set(ns3_s) if k[0] == group)
    if not keys:
        continue
    print()
    print(f"{TITLES[group]}  [{group}]")
    print(f"{'n':>3}  {'txop wall-s/sim-s':>17}  {'ns-3 lean':>10}  {'ns-3 / txop':>11}"
          f"  {'txop Mbit/s':>11}  {'ns-3 Mbit/s':>11}  ns-3 runs (wall-s/sim-s)")
    for key in keys:
        n = key[1]
        t = txop_s.get(key)
        ns3_key = (NS3_OF.get(group, group), n)
        runs = ns3_s.get(ns3_key, [])
        if runs:
            mean = sum(runs) / len(runs)
            ns3 = f"{mean:10.4f}"
            ratio = f"{mean / t:10.0f}x" if t else f"{'-':>11}"
            mbps = f"{sum(ns3_mbps[ns3_key]) / len(ns3_mbps[ns3_key]):11.2f}"
        else:
            ns3, ratio, mbps = f"{'-':>10}", f"{'-':>11}", f"{'-':>11}"
        spread = " ".join(f"{r:.4f}" for r in runs)
        if failed.get(ns3_key):
            spread += f"  ({len(failed[ns3_key])} failed)"
        txop_t = f"{t:17.6f}" if t else f"{'-':>17}"
        txop_m = f"{txop_mbps[key]:11.2f}" if key in txop_mbps else f"{'-':>11}"
        print(f"{n:>3}  {txop_t}  {ns3}  {ratio}  {txop_m}  {mbps}  {spread}")
        if ns3_bss_mbps.get(ns3_key):
            per_bss = ", ".join(f"{name} {sum(v) / len(v):.2f}"
                                for name, v in sorted(ns3_bss_mbps[ns3_key].items()))
            print(f"     ns-3 goodput per BSS (Mbit/s, mean of runs): {per_bss}")
for lines in failed.values():
    for line in lines:
        print(line, file=sys.stderr)
sys.exit(1 if failed else 0)
EOF
