#!/usr/bin/env bash
# What the radiotap capture (`txop run --pcap`) costs: a 60-second rrul on four HT20
# MCS 7 stations, without and with capture, best of three each; prints the slowdown
# and the cost per captured frame (crates/txop-sim/benches/capture.rs).
#
# Usage: scripts/bench-pcap.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo bench -q -p txop-sim --bench capture
