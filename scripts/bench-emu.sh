#!/usr/bin/env bash
# Speed benchmark of the real-time emulator (`txop emu`).
#
# Usage: scripts/bench-emu.sh [SECONDS]   (as root; SECONDS per run, default 10)
#
# 1. The engine alone, without system calls: `cargo bench -p txop-emu --bench engine`
#    (criterion; 1500-byte UDP packets through a VHT80 cell on a virtual clock).
# 2. The real emulator: iperf3 sends 1472-byte UDP datagrams (1500-byte IP packets)
#    from the server's namespace to station 1's through a VHT80 2x2 MCS9 cell
#    (linux-6.16, ~686 Mbit/s of capacity) behind a 10 Gbit/s wire, once at 600 Mbit/s
#    (below the cell's capacity: everything is forwarded) and once at 2 Gbit/s (above
#    it: the emulator reads everything iperf3 manages to send, the cell drops the
#    excess). For each it prints the packets/s and Mbit/s read from and written to
#    the TUN devices, the CPU use of the emulator's loop (one thread), the forwarding
#    rate per CPU-second of that thread (1500-byte packets read + parsed + modelled +
#    written, per second of one core: the one-core capacity), and the timing error
#    (actual − modelled write time) percentiles, of all writes and of the first write
#    of each delivery instant (an A-MPDU's packets leave the model together and are
#    written one after another, a few µs each).
#
# The machine's other load shares the cores with iperf3's sender and receiver, so
# wall-clock rates vary from run to run; the per-CPU-second figure varies less.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
if [ "$(id -u)" -ne 0 ]; then
    echo "bench-emu: needs root (network namespaces, TUN devices)" >&2
    exit 2
fi
command -v iperf3 >/dev/null || { echo "bench-emu: iperf3 missing: run scripts/setup.sh" >&2; exit 2; }

echo "== 1. the engine alone (criterion)"
cargo bench -p txop-emu --bench engine 2>&1 | grep -E "engine_vht80|time:|thrpt:"

echo "== 2. the emulator, ${secs} s per run"
cargo build --release -q -p txop
txop=$(cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/release/txop
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/vht80.toml" <<'TOML'
name = "bench-vht80"
description = "one VHT80 2x2 MCS9 station behind a 10 Gbit/s wire"
stack = "linux-6.16"
[phy]
standard = "ac"
band = "5"
width_mhz = 80
guard_interval = "short"
[stations]
count = 1
mcs = 9
nss = 2
[wired]
rate_mbps = 10000
delay_ms = 0.1
TOML

for rate in 600M 2G; do
    "$txop" emu "$work/vht80.toml" -q --in sta1 -o "$work/out-$rate" -- sh -c \
        "iperf3 -s -1 -D -B \$TXOP_STA1; sleep 0.3; \
         \$TXOP_EXE emu exec server -- iperf3 -u -b $rate -l 1472 -t $secs -c \$TXOP_STA1 -J 2>/dev/null > $work/iperf-$rate.json" \
        >/dev/null
    python3 - "$work/out-$rate/results.json" "$work/iperf-$rate.json" "$rate" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ip = json.load(open(sys.argv[2]))
rate = sys.argv[3]
e = r["emulator"]
c, l = e["counters"], e["loop"]
wall, cpu = l["wall_s"], l["cpu_s"]
sent = ip["end"]["sum"]["bits_per_second"] / 1e6 if "sum" in ip["end"] else float("nan")
rd, wr = c["read_packets"], c["written_packets"]
t, f = e["timing_error"], e["timing_error_first_write"]
print(f"\niperf3 -u -b {rate}: sender {sent:.0f} Mbit/s")
print(f"  read    {rd / wall / 1e3:7.1f} kpps  {c['read_bytes'] * 8 / wall / 1e6:7.1f} Mbit/s")
print(f"  written {wr / wall / 1e3:7.1f} kpps  {c['written_bytes'] * 8 / wall / 1e6:7.1f} Mbit/s"
      f"  (dropped by the cell: {c['cell_drops']})")
print(f"  CPU of the loop: {cpu / wall * 100:.0f}% of one core")
if c["cell_drops"] == 0:
    per_cpu = wr / cpu if cpu > 0 else float("nan")
    print(f"  forwarded per CPU-second: {per_cpu / 1e3:.1f} kpps = {per_cpu * 1500 * 8 / 1e9:.2f} Gbit/s"
          f" of 1500-byte packets on one core (each read, modelled and written)")
else:
    print(f"  per CPU-second: {rd / cpu / 1e3:.1f} kpps read and modelled, {wr / cpu / 1e3:.1f} kpps"
          f" of them written (the rest dropped by the cell's queues)")
print(f"  timing error, all writes:  median {t['p50_us']:.1f} us, p90 {t['p90_us']:.1f}, p99 {t['p99_us']:.1f}, max {t['max_us']:.0f}")
print(f"  first write per instant:   median {f['p50_us']:.1f} us, p90 {f['p90_us']:.1f}, p99 {f['p99_us']:.1f}, max {f['max_us']:.0f}")
PY
done
