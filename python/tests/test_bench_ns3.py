"""scripts/bench-ns3.sh's method (issue 31), fed made-up timings: the runs interleaved
pair by pair, the ratio of each pair (ns-3 over txop, per simulated second), the median
and min–max, the spread and load warnings, the table. No ns-3 or txop needed: the runs
are a fake in-process runner, or tiny shell programs that log their calls."""

from __future__ import annotations

import importlib.util
import io
import os
import pathlib
import stat
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "bench_ns3.py"
_spec = importlib.util.spec_from_file_location("bench_ns3", SCRIPT)
bench = importlib.util.module_from_spec(_spec)
sys.modules["bench_ns3"] = bench  # dataclasses look their module up there
_spec.loader.exec_module(bench)

TCP = "tcp_1down_ht20_mcs7_linux616"
RRUL = "rrul_ht20_mcs7_linux616"
DCF = "dcf_11a_54M_1500B"


def log_text(loads=("0.10", ["0.20"], "1.10"), runs=()):
    """A log as `measure` writes it: RUNS are (side, mode, group, n, pair, wall_s, sim_s,
    throughput_mbps)."""
    start, pairs, end = loads
    lines = ["# ns-3 3.37, 2 cores, commit abc1234, 2026-11-28T00:00:00Z"]
    lines.append(f"load-start {start} 0.30 0.40")
    lines += [f"load-pair {x} 0.30 0.40" for x in pairs]
    for side, mode, group, n, pair, wall_s, sim_s, mbps in runs:
        lines.append(
            f"{side} group={group} n={n} sim_s={sim_s} wall_s={wall_s} "
            f"throughput_mbps={mbps} mode={mode} pair={pair}"
        )
    lines.append(f"load-end {end} 0.50 0.60")
    return "\n".join(lines) + "\n"


def row_runs(txop_wall, ns3_wall, n=5, group=DCF, mode="start-up", sim_s=1):
    """One row's runs: pair k has txop's TXOP_WALL[k] and ns-3's NS3_WALL[k] (s)."""
    runs = []
    for k, (a, b) in enumerate(zip(txop_wall, ns3_wall), start=1):
        runs.append(("txop", mode, group, n, k, a, sim_s, 28.0))
        runs.append(("ns3", mode, group, n, k, b, sim_s, 29.0))
    return runs


def report_of(text):
    return bench.report(bench.parse_log(io.StringIO(text)))


def ratios_of(txop_wall, ns3_wall):
    log = bench.parse_log(io.StringIO(log_text(runs=row_runs(txop_wall, ns3_wall))))
    a = log.runs[bench.RunKey("txop", "start-up", DCF, 5)]
    b = log.runs[bench.RunKey("ns3", "start-up", DCF, 5)]
    return bench.pair_ratios(a, b)


# ---------------------------------------------------------------------------- the order


class FakeRunner:
    """Records every run and every load reading in order; prints fixed timings."""

    def __init__(self, fail=()):
        self.events = []
        self.fail = set(fail)  # indices of runs (0-based) that fail

    def run(self, argv):
        i = sum(1 for e in self.events if e != "load")
        self.events.append(tuple(argv))
        if i in self.fail:
            return bench.Outcome(False, "", f"boom {i}")
        return bench.Outcome(True, f"run{i}")

    def load(self):
        self.events.append("load")
        return "0.50 0.40 0.30"


def test_pairs_alternate_txop_and_ns3_runs_with_a_load_reading_before_each():
    fake = FakeRunner()
    point = bench.SCENARIOS["tcp"][1]  # n = 4, txop's tcp and rrul groups
    log = io.StringIO()
    bench.measure([point], 3, "TXOP", "/ns3", fake.run, fake.load, log, lambda m: None)
    one_pair = [
        "load",
        ("TXOP", "--one", TCP, "4"),
        ("TXOP", "--one", RRUL, "4"),
        ("/ns3/tcp", "--n=4"),
    ]
    # load-start, three pairs A B A B A B, load-end
    assert fake.events == ["load"] + one_pair * 3 + ["load"]
    lines = log.getvalue().splitlines()
    assert lines[0] == "load-start 0.50 0.40 0.30"
    assert lines[1:6] == [
        "load-pair 0.50 0.40 0.30",
        "run0 mode=start-up pair=1",
        "run1 mode=start-up pair=1",
        "run2 mode=start-up pair=1",
        "load-pair 0.50 0.40 0.30",
    ]
    assert lines[-2:] == ["run8 mode=start-up pair=3", "load-end 0.50 0.40 0.30"]


def test_every_point_of_a_scenario_runs_its_pairs_before_the_next_point():
    fake = FakeRunner()
    progress = []
    points = bench.SCENARIOS["dcf"]
    bench.measure(
        points, 2, "T", "/d", fake.run, fake.load, io.StringIO(), progress.append
    )
    runs = [e for e in fake.events if e != "load"]
    expected = []
    for n in (5, 10, 20, 50):
        expected += [("T", "--one", DCF, str(n)), ("/d/dcf", f"--n={n}")] * 2
    assert runs == expected
    assert progress[:3] == [
        "bench-ns3: start-up n=5: pair 1 of 2",
        "bench-ns3: start-up n=5: pair 2 of 2",
        "bench-ns3: start-up n=10: pair 1 of 2",
    ]


def test_steady_state_runs_time_30_s_after_5_s_on_both_sides():
    fake = FakeRunner()
    point = bench.SCENARIOS["steady"][0]
    bench.measure([point], 1, "T", "/d", fake.run, fake.load, io.StringIO(), print)
    assert fake.events[2:5] == [
        ("T", "--one", TCP, "1", "--warmup-s", "5", "--seconds", "30"),
        ("T", "--one", RRUL, "1", "--warmup-s", "5", "--seconds", "30"),
        ("/d/tcp", "--traffic-warmup=5", "--seconds=30", "--n=1"),
    ]


def test_a_failed_run_is_logged_with_its_side_pair_and_error_and_the_pairs_go_on():
    fake = FakeRunner(fail={2, 3})  # pair 2's txop run, pair 2's ns-3 run
    log = io.StringIO()
    point = bench.SCENARIOS["bss4"][0]
    bench.measure([point], 3, "T", "/d", fake.run, fake.load, log, print)
    lines = log.getvalue().splitlines()
    group = "bss4_tcp_1down_ht20_mcs7_linux616"
    assert f"failed side=txop group={group} n=4 mode=start-up pair=2: boom 2" in lines
    assert f"failed side=ns3 group={group} n=4 mode=start-up pair=2: boom 3" in lines
    assert "run5 mode=start-up pair=3" in lines


# ---------------------------------------------------------------------------- the ratio


def test_the_ratio_is_ns3_wall_s_per_simulated_s_over_txops():
    # txop: 0.02 s for 10 simulated s (0.002 s/s); ns-3: 0.5 s for 1 simulated s.
    runs = [
        ("txop", "start-up", DCF, 5, 1, 0.02, 10, 28.0),
        ("ns3", "start-up", DCF, 5, 1, 0.5, 1, 29.0),
    ]
    log = bench.parse_log(io.StringIO(log_text(runs=runs)))
    a = log.runs[bench.RunKey("txop", "start-up", DCF, 5)]
    b = log.runs[bench.RunKey("ns3", "start-up", DCF, 5)]
    assert bench.pair_ratios(a, b) == [250.0]
    row = report_of(log_text(runs=runs)).stdout[-1]
    assert row.split()[1:4] == ["0.002000", "0.5000", "250x"]


def test_each_pair_gives_its_own_ratio_matched_by_pair_number():
    # Medians of each side would give 5 / 1.5 = 3.3; the pairs give 2 and 4.
    assert ratios_of([1.0, 2.0], [2.0, 8.0]) == [2.0, 4.0]
    # A pair one side of which failed gives no ratio.
    runs = row_runs([1.0, 2.0, 3.0], [2.0, 8.0, 9.0])
    del runs[3]  # pair 2's ns-3 run
    log = bench.parse_log(io.StringIO(log_text(runs=runs)))
    a = log.runs[bench.RunKey("txop", "start-up", DCF, 5)]
    b = log.runs[bench.RunKey("ns3", "start-up", DCF, 5)]
    assert bench.pair_ratios(a, b) == [2.0, 3.0]


def test_rrul_rows_are_set_against_the_one_download_ns3_runs():
    runs = row_runs([0.01, 0.01], [1.0, 1.2], n=4, group=TCP, sim_s=10)
    runs += [("txop", "start-up", RRUL, 4, k, 0.02, 10, 37.0) for k in (1, 2)]
    out = report_of(log_text(runs=runs)).stdout
    i = next(i for i, line in enumerate(out) if f"[{RRUL}, start-up]" in line)
    assert out[i + 2].split()[3:5] == ["55x", "50-60x"]


# ---------------------------------------------------------------------------- median, range


def test_median_and_range_of_an_odd_count():
    r = bench.Ratios.of([300.0, 100.0, 200.0])
    assert (r.median, r.low, r.high) == (200.0, 100.0, 300.0)
    assert r.spread == 1.0


def test_the_median_of_an_even_count_is_the_mean_of_the_middle_two():
    r = bench.Ratios.of([2.0, 10.0, 4.0, 6.0])
    assert (r.median, r.low, r.high) == (5.0, 2.0, 10.0)
    assert r.spread == 8.0 / 5.0


def test_the_table_row_gives_the_median_ratio_and_its_range():
    # ratios 150, 170, 160, 400: median 165, range 150-400 (the outlier does not move it)
    txop = [0.001, 0.001, 0.001, 0.001]
    ns3 = [0.150, 0.170, 0.160, 0.400]
    out = report_of(log_text(runs=row_runs(txop, ns3))).stdout
    assert out[-1].split()[3:6] == ["165x", "150-400x", "152%"]


def test_the_table_of_known_runs_line_by_line():
    runs = row_runs([0.0012, 0.0013, 0.0011], [0.2, 0.21, 0.19])
    # n = 10: no ns-3 run, a row of dashes
    runs.append(("txop", "start-up", DCF, 10, 1, 0.0017, 1, 28.0))
    rep = report_of(log_text(loads=("0.10", ["0.20", "1.30"], "1.10"), runs=runs))
    assert rep.stdout == [
        "# ns-3 3.37, 2 cores, commit abc1234, 2026-11-28T00:00:00Z",
        (
            "load average (1, 5, 15 min): 0.10 0.30 0.40 before, 1.10 0.50 0.60 after; "
            "highest 1-min between pairs 1.30"
        ),
        "",
        (
            "802.11a 54 Mbit/s DCF, 1500 B, saturated uplink, 1 simulated s  "
            "[dcf_11a_54M_1500B, start-up]"
        ),
        (
            "  n  txop wall-s/sim-s  ns-3 wall-s/sim-s  ns-3/txop median      min-max"
            "  spread  txop Mbit/s  ns-3 Mbit/s  pairs"
        ),
        (
            "  5           0.001200             0.2000              167x     "
            "162-173x      7%        28.00        29.00  3"
        ),
        (
            " 10           0.001700                  -                 -            -"
            "       -        28.00            -  0"
        ),
    ]
    assert rep.stderr == [] and rep.exit_code == 0


def test_failed_runs_are_printed_and_make_the_exit_code_1():
    text = log_text(runs=row_runs([0.001], [0.2]))
    text += "failed side=ns3 group=dcf_11a_54M_1500B n=5 mode=start-up pair=2: boom\n"
    rep = report_of(text)
    assert rep.stderr == [
        "failed side=ns3 group=dcf_11a_54M_1500B n=5 mode=start-up pair=2: boom"
    ]
    assert rep.exit_code == 1


# ---------------------------------------------------------------------------- warnings


def spread_warnings(ratios):
    rep = report_of(log_text(runs=row_runs([1.0] * len(ratios), ratios)))
    return [w for w in rep.stderr if "spread" in w]


def test_the_spread_warning_fires_above_25_percent_of_the_median_and_not_at_or_below():
    assert spread_warnings([80.0, 100.0, 105.0]) == []  # exactly 25 %
    assert spread_warnings([90.0, 100.0, 110.0]) == []  # 20 %
    assert spread_warnings([79.0, 100.0, 105.0]) == [
        (
            "bench-ns3: warning: dcf_11a_54M_1500B start-up n=5: "
            "the pairs' ratios spread by 26% (> 25%)"
        )
    ]


def load_warnings(start, pairs, end):
    rep = report_of(log_text(loads=(start, pairs, end), runs=row_runs([1.0], [100.0])))
    return [w for w in rep.stderr if "load" in w]


def test_the_load_warning_fires_when_the_load_before_the_first_pair_is_above_1():
    assert load_warnings("1.00", ["1.00", "1.50"], "1.80") == []
    assert load_warnings("1.01", ["1.01", "1.50"], "1.80") == [
        (
            "bench-ns3: warning: the 1-minute load average of other processes reached 1.01 "
            "(> 1): the machine was not quiet; do not quote these figures"
        )
    ]


def test_between_pairs_and_after_the_benchmarks_own_process_is_taken_off():
    # The benchmark's own runnable process counts 1: 1.90 between pairs is 0.90 others.
    assert load_warnings("0.50", ["0.50", "1.90", "2.00"], "1.95") == []
    assert load_warnings("0.50", ["0.50", "2.20", "1.50"], "1.50") != []
    assert load_warnings("0.50", ["0.50", "1.50"], "2.10") != []
    assert bench.others_load(0.5, [0.5, 1.75, 2.25], 1.25) == [0.5, 0.75, 1.25, 0.25]


# ---------------------------------------------------------------------------- end to end


FAKE = """#!/bin/sh
echo "$(basename "$0") $*" >> "{calls}"
case $(basename "$0") in
  saturated) echo "txop group=$2 n=$3 sim_s=10 warmup_s=0 wall_s=0.02 throughput_mbps=50.0" ;;
  *) case "$*" in
       *--n=16*) echo "oops" >&2; echo "ns-3 crashed" >&2; exit 1 ;;
     esac
     echo "ns3 group=bss4_tcp_1down_ht20_mcs7_linux616 n=4 sim_s=10 wall_s=3 throughput_mbps=55.0" ;;
esac
"""


def test_the_command_line_runs_real_programs_in_pairs_and_reports(tmp_path):
    calls = tmp_path / "calls.txt"
    for name in ("saturated", "bss4"):
        p = tmp_path / name
        p.write_text(FAKE.format(calls=calls))
        p.chmod(p.stat().st_mode | stat.S_IXUSR)
    loadavg = tmp_path / "loadavg"
    loadavg.write_text("0.25 0.20 0.15 1/100 4242\n")
    log = tmp_path / "last-run.txt"
    cmd = [sys.executable, str(SCRIPT)]
    env = dict(os.environ, LC_ALL="C")
    measure = subprocess.run(
        [
            *cmd,
            "measure",
            "--txop",
            str(tmp_path / "saturated"),
            "--ns3-dir",
            str(tmp_path),
        ]
        + ["--pairs", "2", "--log", str(log), "--loadavg", str(loadavg), "bss4"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    assert measure.stderr.splitlines() == [
        f"bench-ns3: start-up n={n}: pair {k} of 2" for n in (4, 16) for k in (1, 2)
    ]
    group = "bss4_tcp_1down_ht20_mcs7_linux616"
    pair = [f"saturated --one {group} 4", "bss4 --n=4"]
    pair16 = [f"saturated --one {group} 16", "bss4 --n=16"]
    assert calls.read_text().splitlines() == pair * 2 + pair16 * 2
    assert (tmp_path / "stderr.txt").read_text() == "oops\nns-3 crashed\n"
    rep = subprocess.run(
        [*cmd, "report", str(log)], capture_output=True, text=True, check=False, env=env
    )
    assert rep.returncode == 1
    out = rep.stdout.splitlines()
    assert out[0].startswith("load average (1, 5, 15 min): 0.25 0.20 0.15 before")
    # 3 s / 10 simulated s over 0.02 s / 10 simulated s
    assert out[-2].split()[:4] == ["4", "0.002000", "0.3000", "150x"]
    assert out[-1].split()[-1] == "0"  # n = 16: ns-3 failed in both pairs
    assert rep.stderr.splitlines() == [
        f"failed side=ns3 group={group} n=16 mode=start-up pair={k}: ns-3 crashed"
        for k in (1, 2)
    ]
