"""The method of scripts/bench-ns3.sh (issue 31): which runs it makes, in which order,
and what it concludes from their timings.

`measure` runs the points of the chosen scenarios, K pairs each (A B A B …: one run of
every txop group of the point, then one of the ns-3 program), reads the load average
before every pair, before the first and after the last, and appends one line per run to
the log; `report` reads such a log and prints the tables (the median of the pairs'
ratios, their min–max and spread) and the warnings. The shell script builds both
programs and calls the two; python/tests/test_bench_ns3.py feeds them made-up timings.
The reasons for the method are in the shell script's header.

Usage (from the repository's root, as the shell script runs it):
  python3 scripts/bench_ns3.py measure --txop BIN --ns3-dir DIR --pairs K --log FILE
      [--loadavg PATH] SCENARIO...
  python3 scripts/bench_ns3.py report FILE
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, TextIO

# A row warns when its pairs' ratios spread (max − min) by more than this share of their
# median.
SPREAD_MAX = 0.25
# The run warns when the 1-minute load average of other processes exceeds this.
LOAD_MAX = 1.0
LOADAVG = "/proc/loadavg"


@dataclass(frozen=True)
class Run:
    """One program run of a pair."""

    side: str  # "txop" or "ns3"
    # txop's group; for ns-3, the point's first group (the one its runs stand for).
    group: str
    argv: list[str]


@dataclass(frozen=True)
class Point:
    """One row of a table: K pairs of runs at one station count."""

    # "start-up" (building, running and tearing down) or "steady" (30 s timed after 5 s).
    mode: str
    n: int
    # The ns-3 program (a file in the ns-3 directory) and its flags, but --n.
    ns3_args: str
    # txop's criterion groups run in each pair, in this order, before the ns-3 program.
    groups: tuple[str, ...]

    def txop_argv(self, txop: str, group: str) -> list[str]:
        """The one-shot run of the bench binary: `saturated --one GROUP N`."""
        steady = ["--warmup-s", "5", "--seconds", "30"] if self.mode == "steady" else []
        return [txop, "--one", group, str(self.n), *steady]

    def ns3_argv(self, ns3_dir: str) -> list[str]:
        program, *flags = self.ns3_args.split()
        return [str(Path(ns3_dir) / program), *flags, f"--n={self.n}"]

    def pair(self, txop: str, ns3_dir: str) -> list[Run]:
        """One pair, in order: A, one run of every txop group; then B, the ns-3 program."""
        runs = [Run("txop", g, self.txop_argv(txop, g)) for g in self.groups]
        return runs + [Run("ns3", self.groups[0], self.ns3_argv(ns3_dir))]


TCP_GROUPS = ("tcp_1down_ht20_mcs7_linux616", "rrul_ht20_mcs7_linux616")
SCENARIOS = {
    "dcf": [
        Point("start-up", n, "dcf", ("dcf_11a_54M_1500B",)) for n in (5, 10, 20, 50)
    ],
    "tcp": [Point("start-up", n, "tcp", TCP_GROUPS) for n in (1, 4, 16)],
    "steady": [
        Point("steady", n, "tcp --traffic-warmup=5 --seconds=30", TCP_GROUPS)
        for n in (1, 4, 16)
    ],
    "bss4": [
        Point("start-up", n, "bss4", ("bss4_tcp_1down_ht20_mcs7_linux616",))
        for n in (4, 16)
    ],
}

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
}  # fmt: skip


# ---------------------------------------------------------------------------- measuring


@dataclass(frozen=True)
class Outcome:
    """What one run gave: its stdout line, or the last line of its stderr if it failed."""

    ok: bool
    line: str
    error: str = ""


def run_program(argv: list[str], stderr_path: Path) -> Outcome:
    """Run ARGV with its stderr in STDERR_PATH (kept for a look after a failure)."""
    try:
        with open(stderr_path, "wb") as err:
            p = subprocess.run(argv, check=False, stdout=subprocess.PIPE, stderr=err)
    except OSError as e:
        return Outcome(False, "", f"{argv[0]}: {e.strerror}")
    line = p.stdout.decode(errors="replace").rstrip("\n")
    if p.returncode == 0:
        return Outcome(True, line)
    text = stderr_path.read_bytes().decode(errors="replace")
    # `tail -n 1`: the last line, its newline not counted.
    return Outcome(False, line, text.removesuffix("\n").rsplit("\n", 1)[-1])


def read_load(path: str = LOADAVG) -> str:
    """The 1-, 5- and 15-minute load averages, as /proc/loadavg gives them."""
    return " ".join(Path(path).read_text().split()[:3])


def measure(
    points: list[Point],
    pairs: int,
    txop: str,
    ns3_dir: str,
    run: Callable[[list[str]], Outcome],
    load: Callable[[], str],
    log: TextIO,
    progress: Callable[[str], None],
) -> None:
    """For every point, PAIRS pairs in turn: the load, then one run of each txop group,
    then one of the ns-3 program; the load before the first pair and after the last.

    Every run appends its line to LOG with `mode=… pair=K` (the pair is what `report`
    matches the two sides by), or a `failed side=…` line with the last line of its stderr.
    """
    log.write(f"load-start {load()}\n")
    for point in points:
        for k in range(1, pairs + 1):
            progress(f"bench-ns3: {point.mode} n={point.n}: pair {k} of {pairs}")
            log.write(f"load-pair {load()}\n")
            for r in point.pair(txop, ns3_dir):
                out = run(r.argv)
                tag = f"mode={point.mode} pair={k}"
                if out.ok:
                    log.write(f"{out.line} {tag}\n")
                else:
                    log.write(
                        f"failed side={r.side} group={r.group} n={point.n} {tag}: "
                        f"{out.error}\n"
                    )
    log.write(f"load-end {load()}\n")


# ---------------------------------------------------------------------------- reporting


@dataclass(frozen=True)
class Timing:
    """One run's figures."""

    wall_s_per_sim_s: float
    throughput_mbps: float


@dataclass(frozen=True)
class RunKey:
    side: str  # "txop" or "ns3"
    mode: str
    group: str
    n: int


@dataclass
class Log:
    """A parsed log: runs by point and pair, load figures, failures."""

    runs: dict[RunKey, dict[int, Timing]]
    notes: list[str]
    # "load-start" and "load-end": the 1-, 5- and 15-minute figures as printed.
    loads: dict[str, list[str]]
    # The 1-minute figure read before each pair, in order.
    pair_loads: list[float]
    failed: list[str]


def fields(line: str) -> dict[str, str]:
    return dict(f.split("=", 1) for f in line.split()[1:] if "=" in f)


def parse_log(lines) -> Log:
    log = Log(defaultdict(dict), [], {}, [], [])
    for line in lines:
        line = line.strip()
        if line.startswith("#"):
            log.notes.append(line)
            continue
        kind = line.split()[0]
        if kind.startswith("load-"):
            figures = line.split()[1:]
            if kind == "load-pair":
                log.pair_loads.append(float(figures[0]))
            else:
                log.loads[kind] = figures
            continue
        if kind == "failed":
            log.failed.append(line)
            continue
        d = fields(line)
        key = RunKey(kind, d["mode"], d["group"], int(d["n"]))
        log.runs[key][int(d["pair"])] = Timing(
            float(d["wall_s"]) / float(d["sim_s"]), float(d["throughput_mbps"])
        )
    return log


def pair_ratios(txop: dict[int, Timing], ns3: dict[int, Timing]) -> list[float]:
    """ns-3's wall-s per simulated s over txop's, one per pair both sides completed."""
    return [
        ns3[k].wall_s_per_sim_s / txop[k].wall_s_per_sim_s
        for k in sorted(set(txop) & set(ns3))
    ]


@dataclass(frozen=True)
class Ratios:
    """The median of a row's pair ratios and their range."""

    median: float
    low: float
    high: float

    @classmethod
    def of(cls, ratios: list[float]) -> Ratios:
        return cls(statistics.median(ratios), min(ratios), max(ratios))

    @property
    def spread(self) -> float:
        """(max − min) / median."""
        return (self.high - self.low) / self.median


def others_load(
    start_1min: float, pair_loads: list[float], end_1min: float
) -> list[float]:
    """The 1-minute load of other processes at each reading: the figure before the first
    pair as read; from the first pair on the benchmark keeps one process runnable, which the
    figure counts, so one is taken off the readings between pairs and after the last."""
    return [start_1min] + [x - 1 for x in pair_loads[1:] + [end_1min]]


def load_warning(others: list[float]) -> str | None:
    if max(others) > LOAD_MAX:
        return (
            f"the 1-minute load average of other processes reached {max(others):.2f} "
            f"(> {LOAD_MAX:g}): the machine was not quiet; do not quote these figures"
        )
    return None


def spread_warning(key: RunKey, ratios: Ratios) -> str | None:
    if ratios.spread > SPREAD_MAX:
        return (
            f"{key.group} {key.mode} n={key.n}: the pairs' ratios spread by "
            f"{ratios.spread * 100:.0f}% (> {SPREAD_MAX * 100:.0f}%)"
        )
    return None


HEADER = (
    f"{'n':>3}  {'txop wall-s/sim-s':>17}  {'ns-3 wall-s/sim-s':>17}  {'ns-3/txop median':>16}"
    f"  {'min-max':>11}  {'spread':>6}  {'txop Mbit/s':>11}  {'ns-3 Mbit/s':>11}  pairs"
)


def table_row(
    n: int, a: dict[int, Timing], b: dict[int, Timing]
) -> tuple[str, Ratios | None]:
    """A row of the table: txop's runs A and ns-3's B by pair; and the row's ratios."""
    ratios = pair_ratios(a, b)
    txop_s = statistics.median(v.wall_s_per_sim_s for v in a.values())
    txop_m = statistics.median(v.throughput_mbps for v in a.values())
    summary = Ratios.of(ratios) if ratios else None
    if summary:
        ns3_s = f"{statistics.median(v.wall_s_per_sim_s for v in b.values()):17.4f}"
        ns3_m = f"{statistics.median(v.throughput_mbps for v in b.values()):11.2f}"
        ratio = f"{summary.median:15.0f}x"
        rng = f"{summary.low:.0f}-{summary.high:.0f}x"
        spr = f"{summary.spread * 100:5.0f}%"
    else:
        ns3_s, ns3_m, ratio, rng, spr = (
            f"{'-':>17}",
            f"{'-':>11}",
            f"{'-':>16}",
            "-",
            "-",
        )
    row = (
        f"{n:>3}  {txop_s:17.6f}  {ns3_s}  {ratio}  {rng:>11}  {spr:>6}  {txop_m:11.2f}"
        f"  {ns3_m}  {len(ratios)}"
    )
    return row, summary


@dataclass
class Report:
    stdout: list[str]
    # Lines for stderr: the failed runs, then the warnings.
    stderr: list[str]
    exit_code: int


def report(log: Log) -> Report:
    """The tables, the failures and the warnings of a parsed log."""
    out = list(log.notes)
    start = log.loads.get("load-start", ["?"] * 3)
    end = log.loads.get("load-end", ["?"] * 3)
    highest = (
        f"; highest 1-min between pairs {max(log.pair_loads):.2f}"
        if log.pair_loads
        else ""
    )
    out.append(
        f"load average (1, 5, 15 min): {' '.join(start)} before, {' '.join(end)} after{highest}"
    )
    warnings = [
        load_warning(others_load(float(start[0]), log.pair_loads, float(end[0])))
    ]
    for (mode, group), title in TITLES.items():
        keys = sorted(
            (
                k
                for k in log.runs
                if k.side == "txop" and k.mode == mode and k.group == group
            ),
            key=lambda k: k.n,
        )
        if not keys:
            continue
        out += ["", f"{title}  [{group}, {mode}]", HEADER]
        for key in keys:
            ns3 = log.runs.get(RunKey("ns3", mode, NS3_OF.get(group, group), key.n), {})
            row, ratios = table_row(key.n, log.runs[key], ns3)
            out.append(row)
            if ratios:
                warnings.append(spread_warning(key, ratios))
    err = log.failed + [f"bench-ns3: warning: {w}" for w in warnings if w]
    return Report(out, err, 1 if log.failed else 0)


# ---------------------------------------------------------------------------- command line


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="bench_ns3.py", description=__doc__.split("\n\n")[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("measure", help="run the pairs, appending to the log")
    m.add_argument("--txop", required=True, help="the saturated bench binary")
    m.add_argument(
        "--ns3-dir", required=True, help="where bench/ns3/build.sh put the programs"
    )
    m.add_argument("--pairs", type=int, required=True)
    m.add_argument("--log", required=True, type=Path)
    m.add_argument("--loadavg", default=LOADAVG, help="the load average's file")
    m.add_argument("scenarios", nargs="+", choices=sorted(SCENARIOS))
    r = sub.add_parser("report", help="print the tables and warnings of a log")
    r.add_argument("log", type=Path)
    args = parser.parse_args(argv)

    if args.command == "measure":
        if args.pairs < 1:
            parser.error("--pairs needs a positive whole number")
        stderr_path = Path(args.ns3_dir) / "stderr.txt"
        with open(args.log, "a", buffering=1) as log:
            measure(
                [p for s in args.scenarios for p in SCENARIOS[s]],
                args.pairs,
                args.txop,
                args.ns3_dir,
                lambda a: run_program(a, stderr_path),
                lambda: read_load(args.loadavg),
                log,
                lambda msg: print(msg, file=sys.stderr, flush=True),
            )
        return 0
    with open(args.log) as f:
        rep = report(parse_log(f))
    for line in rep.stdout:
        print(line)
    sys.stdout.flush()
    for line in rep.stderr:
        print(line, file=sys.stderr)
    return rep.exit_code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
