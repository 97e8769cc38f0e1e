#!/usr/bin/env bash
# Instruction counts of two fixed CLI runs under callgrind: the speed guard for
# refactors (CONTRIBUTING.md: at most 5 % above the previous figure).
#
# Usage: scripts/bench-callgrind.sh [TXOP_BINARY]
#
# Runs `txop run bench/callgrind/{rrul,tcp_1down}.toml --json` (one HT20 MCS 7 station,
# Linux 6.16, 10 simulated seconds), with fixed rates and with minstrel_ht, under
# `valgrind --tool=callgrind` and prints the instructions executed (Ir) of each. Counts are deterministic to within a few
# thousand instructions, so one run each is enough. Needs valgrind (apt: valgrind).
# shellcheck source=bench-preamble.sh
. "$(dirname "$0")/bench-preamble.sh"
# Each run with fixed rates (the scenario's) and with minstrel_ht (issue 14: at most
# 20 % more), and the ratio between them.
for run in rrul tcp_1down; do
    fixed=0
    for rc in fixed minstrel_ht; do
        valgrind --tool=callgrind --callgrind-out-file="$out/$run-$rc.out" \
            "$bin" run "bench/callgrind/$run.toml" --json --set "stations.rate_control=$rc" \
            >"$out/$run-$rc.json" 2>"$out/$run-$rc.log"
        ir=$(awk '/^summary:/ {print $2}' "$out/$run-$rc.out")
        # Per data PPDU too: a change of a MAC rule changes how many exchanges the same
        # 10 s hold (issue 26's backoff rule: rrul 12 387 -> 13 554), and the total
        # with them; the count per PPDU is what the code costs per unit of work.
        ppdus=$(python3 -c 'import json,sys; print(sum(s["ppdus"] for s in json.load(open(sys.argv[1]))["stations"]))' "$out/$run-$rc.json")
        if [ "$rc" = fixed ]; then
            fixed=$ir
            printf '%-10s %-12s %14s instructions  (%.1f M; %6d PPDUs, %.0f per PPDU)\n' "$run" "$rc" "$ir" \
                "$(echo "$ir / 1000000" | bc -l)" "$ppdus" "$(echo "$ir / $ppdus" | bc -l)"
        else
            printf '%-10s %-12s %14s instructions  (%.1f M, %.3f x fixed; %6d PPDUs, %.0f per PPDU)\n' "$run" "$rc" "$ir" \
                "$(echo "$ir / 1000000" | bc -l)" "$(echo "$ir / $fixed" | bc -l)" "$ppdus" "$(echo "$ir / $ppdus" | bc -l)"
        fi
    done
done
