#!/usr/bin/env bash
# What running the kernel's own minstrel_ht costs beside txop's Rust (issue 28, "bring
# your patch"): the two fixed runs of bench-callgrind.sh (one HT20 MCS 7 station, Linux
# 6.16, 10 simulated seconds) with `minstrel_ht-6` (txop's Rust, the era Linux 6.16
# runs) and with `minstrel_ht-kernel` (rc80211_minstrel_ht.c of Debian's
# linux-source-6.12, built by txop-kernel), under callgrind, in one invocation: the
# instructions of each and their ratio, in all and per data PPDU. The two give the same
# results (checked here: --json equal but for the fields that name the code), so the
# ratio is the cost of the code alone.
#
# Usage: scripts/bench-kernel-rc.sh [TXOP_BINARY]
#
# The kernel code is built (and cached) once before the measured runs, so the counts
# hold the shared object's loading but not its compilation. Needs valgrind and the
# Debian package linux-source-6.12.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-}
if [ -z "$bin" ]; then
    cargo build --release -q -p txop
    bin=target/release/txop
fi
command -v valgrind >/dev/null || { echo "bench-kernel-rc: valgrind not found (apt install valgrind)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# Build (or find in the cache) the kernel's code outside the measurement.
"$bin" run bench/callgrind/rrul.toml --set duration_s=0.1 \
    --set stations.rate_control=minstrel_ht-kernel >/dev/null
for run in rrul tcp_1down; do
    for rc in minstrel_ht-6 minstrel_ht-kernel; do
        valgrind --tool=callgrind --callgrind-out-file="$out/$run-$rc.out" \
            "$bin" run "bench/callgrind/$run.toml" --json --set "stations.rate_control=$rc" \
            >"$out/$run-$rc.json" 2>"$out/$run-$rc.log"
    done
    python3 - "$out" "$run" <<'PY'
import json, re, sys
out, run = sys.argv[1], sys.argv[2]
def ir(rc):
    with open(f"{out}/{run}-{rc}.out") as f:
        return int(re.search(r"^summary: (\d+)", f.read(), re.M).group(1))
def results(rc):
    r = json.load(open(f"{out}/{run}-{rc}.json"))
    for s in r["stations"]:
        s["rate"] = None
        s["rate_control"].pop("kind")
        s["rate_control"].pop("code", None)
    return r
rust, kernel = results("minstrel_ht-6"), results("minstrel_ht-kernel")
ppdus = sum(s["ppdus"] for s in rust["stations"])
a, b = ir("minstrel_ht-6"), ir("minstrel_ht-kernel")
same = "same results" if rust == kernel else "RESULTS DIFFER"
print(f"{run:<10} Rust {a/1e6:8.1f} M  kernel C {b/1e6:8.1f} M instructions  "
      f"x{b/a:.3f}  ({ppdus} PPDUs: {a/ppdus:.0f} vs {b/ppdus:.0f} per PPDU; {same})")
PY
done
