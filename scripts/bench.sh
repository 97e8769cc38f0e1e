#!/usr/bin/env bash
# Speed benchmark of txop on saturated cells and TCP.
#
# Usage: scripts/bench.sh [criterion args...]
#
# Runs `cargo bench -p txop-sim --bench saturated` (extra arguments go to criterion,
# e.g. `scripts/bench.sh dcf_11a` to run only that group), then prints a table of
# wall-seconds per simulated second (criterion's mean time per iteration divided by the
# simulated seconds of one iteration: 1, or 10 for the TCP groups). For the comparison
# with ns-3, measured back to back in the same run, see scripts/bench-ns3.sh.
#
# Figures come from <target>/criterion/<group>/<n>/new/estimates.json; results not
# refreshed by this run are marked "(old)". Needs cargo and python3.
set -euo pipefail

cd "$(dirname "$0")/.."

start=$(date +%s)
cargo bench -p txop-sim --bench saturated -- "$@"

target_dir=$(cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')

python3 - "$target_dir/criterion" "$start" <<'EOF'
import json
import os
import sys

root, start = sys.argv[1], float(sys.argv[2])

GROUPS = [
    ("dcf_11a_54M_1500B", "802.11a 54 Mbit/s DCF, 1500 B, saturated uplink", [5, 10, 20, 50]),
    ("ht20_mcs7_ampdu_1500B", "802.11n HT20 MCS 7, A-MPDU, 1500 B, saturated uplink", [5, 50]),
    ("rrul_ht20_mcs7_linux616", "rrul on every station, HT20 MCS 7, linux-6.16", [1, 4, 16]),
    ("tcp_1down_ht20_mcs7_linux616", "one TCP download per station, HT20 MCS 7, linux-6.16", [1, 4, 16]),
]


# Simulated seconds per iteration (TCP_SECS in crates/txop-sim/benches/saturated.rs);
# the other groups run one.
SIM_S = {"rrul_ht20_mcs7_linux616": 10, "tcp_1down_ht20_mcs7_linux616": 10}


def estimate(group, n):
    """Mean wall-s per simulated s, and whether it predates this run; None if absent."""
    path = os.path.join(root, group, str(n), "new", "estimates.json")
    try:
        with open(path) as f:
            mean_ns = json.load(f)["mean"]["point_estimate"]
    except FileNotFoundError:
        return None
    return mean_ns / 1e9 / SIM_S.get(group, 1), os.path.getmtime(path) < start


for group, title, ns in GROUPS:
    print()
    print(f"{title}  [{group}]")
    print(f"{'n':>4}  {'txop wall-s/sim-s':>18}")
    for n in ns:
        est = estimate(group, n)
        if est is None:
            print(f"{n:>4}  {'-':>18}")
            continue
        secs, old = est
        note = "  (old)" if old else ""
        print(f"{n:>4}  {secs:18.6f}{note}")
EOF
