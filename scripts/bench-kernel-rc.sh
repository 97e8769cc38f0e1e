#!/usr/bin/env bash
# What running the kernel's own code costs beside txop's Rust (issue 28, "bring your
# patch"): the two fixed runs of bench-callgrind.sh (one HT20 MCS 7 station, Linux
# 6.16, 10 simulated seconds) under callgrind, in one invocation, each unit against
# its Rust run:
#   minstrel_ht  `minstrel_ht-6` (txop's Rust, the era Linux 6.16 runs) against
#                `minstrel_ht-kernel` (rc80211_minstrel_ht.c);
#   fq           the scenario's fixed rate, against `kernel.units=["fq"]`
#                (fq_impl.h + codel_impl.h);
#   aql          the same, against `kernel.units=["aql"]` (the AQL functions of
#                tx.c / sta_info.c);
#   scheduler    the same, against `kernel.units=["scheduler"]` (6.12's
#                ieee80211_next_txq, ieee80211_txq_may_transmit and the rest);
#   airtime      the same, against `kernel.units=["airtime"]` (airtime.c's
#                ieee80211_calc_expected_tx_airtime for AQL's estimate);
# all from Debian's linux-source-6.12, built by txop-kernel. It prints the
# instructions of each and their ratio, in all and per data PPDU. Each pair gives the
# same results (checked here: --json equal but for the fields that name the code), so
# the ratio is the cost of the code alone.
#
# Usage: [UNITS="scheduler airtime"] scripts/bench-kernel-rc.sh [TXOP_BINARY]
# (UNITS: only those pairs; all by default.)
#
# The kernel code is built (and cached) once before the measured runs, so the counts
# hold the shared object's loading but not its compilation. Needs valgrind and the
# Debian package linux-source-6.12.
# shellcheck source=bench-preamble.sh
. "$(dirname "$0")/bench-preamble.sh"
# Build (or find in the cache) the kernel's code outside the measurement.
"$bin" run bench/callgrind/rrul.toml --set duration_s=0.1 \
    --set stations.rate_control=minstrel_ht-kernel \
    --set 'kernel.units=["fq","aql","scheduler","airtime"]' >/dev/null
# unit, the Rust run's --set, the kernel run's --set.
pairs=(
    "minstrel_ht|stations.rate_control=minstrel_ht-6|stations.rate_control=minstrel_ht-kernel"
    'fq|duration_s=10|kernel.units=["fq"]'
    'aql|duration_s=10|kernel.units=["aql"]'
    'scheduler|duration_s=10|kernel.units=["scheduler"]'
    'airtime|duration_s=10|kernel.units=["airtime"]'
)
for run in rrul tcp_1down; do
    for pair in "${pairs[@]}"; do
        IFS='|' read -r unit rust kernel <<<"$pair"
        if [ -n "${UNITS:-}" ] && [[ " $UNITS " != *" $unit "* ]]; then
            continue
        fi
        for side in rust kernel; do
            valgrind --tool=callgrind --callgrind-out-file="$out/$run-$unit-$side.out" \
                "$bin" run "bench/callgrind/$run.toml" --json --set "${!side}" \
                >"$out/$run-$unit-$side.json" 2>"$out/$run-$unit-$side.log"
        done
        python3 - "$out" "$run" "$unit" <<'PY'
import json, re, sys
out, run, unit = sys.argv[1:4]
def ir(side):
    with open(f"{out}/{run}-{unit}-{side}.out") as f:
        return int(re.search(r"^summary: (\d+)", f.read(), re.M).group(1))
def results(side):
    r = json.load(open(f"{out}/{run}-{unit}-{side}.json"))
    r.pop("kernel_code", None)
    if unit == "minstrel_ht":
        for s in r["stations"]:
            s["rate"] = None
            s["rate_control"].pop("kind")
            s["rate_control"].pop("code", None)
    return r
rust, kernel = results("rust"), results("kernel")
ppdus = sum(s["ppdus"] for s in rust["stations"])
a, b = ir("rust"), ir("kernel")
same = "same results" if rust == kernel else "RESULTS DIFFER"
print(f"{run:<10} {unit:<12} Rust {a/1e6:8.1f} M  kernel C {b/1e6:8.1f} M instructions  "
      f"x{b/a:.3f}  ({ppdus} PPDUs: {a/ppdus:.0f} vs {b/ppdus:.0f} per PPDU; {same})")
PY
    done
done
