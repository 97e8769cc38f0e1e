#!/usr/bin/env bash
# Build the lean ns-3 programs (dcf.cc, tcp.cc, hidden.cc, bss4.cc) against the installed ns-3
# (Debian's libns3-dev, found through pkg-config) with g++ -O2.
#
# Usage: bench/ns3/build.sh OUT_DIR
# Writes OUT_DIR/dcf, tcp, hidden and bss4; rebuilds only when a source is newer. Exit 2 when
# ns-3's development files or g++ are missing.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: bench/ns3/build.sh OUT_DIR}
mkdir -p "$out"

for tool in g++ pkg-config; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "bench/ns3/build.sh: error: $tool not found (apt-get install g++ pkg-config libns3-dev)" >&2
        exit 2
    fi
done
modules="ns3-core ns3-network ns3-mobility ns3-propagation ns3-wifi ns3-internet ns3-internet-apps ns3-applications ns3-point-to-point ns3-traffic-control"
if ! pkg-config --exists $modules; then
    echo "bench/ns3/build.sh: error: ns-3's pkg-config files not found (apt-get install libns3-dev)" >&2
    exit 2
fi

# Debian's .pc files name libgsl.so and libgslcblas.so, which only libgsl-dev installs;
# the programs do not use GSL themselves (libns3 links it), so absolute paths that do
# not exist are left out. The include flags carry a stray "-I/usr;": use our own.
libs=()
for flag in $(pkg-config --libs $modules); do
    case $flag in
        /*) [ -e "$flag" ] || continue ;;
    esac
    # shellcheck disable=SC2076
    [[ " ${libs[*]-} " =~ " $flag " ]] || libs+=("$flag")
done

for prog in dcf tcp hidden bss4; do
    if [ ! -x "$out/$prog" ] || [ "$here/$prog.cc" -nt "$out/$prog" ] || [ "$0" -nt "$out/$prog" ]; then
        echo "bench/ns3/build.sh: building $out/$prog" >&2
        g++ -O2 -std=c++17 -I/usr/include -o "$out/$prog" "$here/$prog.cc" "${libs[@]}"
    fi
done
