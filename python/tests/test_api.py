"""txop.run / scenario / compare / stacks / list against the command line."""

from __future__ import annotations

import filecmp
import json
import math
import threading
import time

import pytest
import txop


def test_run_gives_the_bytes_of_txop_run_json(cli):
    sc = txop.scenario("default", {"stations.list[0].count": 1}, stack="linux-4.9")
    r = txop.run(sc, seed=3)
    code, out, _ = cli(
        "run", "default", "--set", "stations.list[0].count=1", "--set", "stack=linux-4.9",
        "--seed", "3", "--json",
    )
    assert code == 0
    assert r.json.encode() == out
    assert r.results["seed"] == 3


def test_a_bss_scenario_matches_too_and_has_a_bss_frame(cli):
    r = txop.run("neighbours-in-range", seed=2, duration_s=2)
    code, out, _ = cli("run", "neighbours-in-range", "--set", "duration_s=2", "--seed", "2", "--json")
    assert code == 0 and r.json.encode() == out
    bss = r.bss
    assert list(bss.index) == [b["name"] for b in r.results["bss"]]
    # Each BSS's stations add up to its total.
    per_bss = r.stations.groupby(level="bss")["throughput_bps"].sum()
    for name, row in bss.iterrows():
        assert per_bss[name] == pytest.approx(row["total_throughput_bps"], rel=1e-9)


def test_bad_keys_and_values_raise_the_line_txop_prints(cli):
    for args, overrides in [
        (["--set", "stations.cuont=3"], {"stations.cuont": 3}),
        (["--set", "stack=linux-9"], {"stack": "linux-9"}),
    ]:
        with pytest.raises(txop.TxopError) as e:
            txop.scenario("default", overrides)
        code, _, err = cli("run", "default", *args)
        assert code == 2
        assert err == f"txop: error: {e.value}\n"
        assert isinstance(e.value, ValueError)
    with pytest.raises(txop.TxopError, match="no such scenario file or built-in scenario"):
        txop.scenario("defualt")


def test_setting_a_bad_value_in_place_keeps_the_scenario_as_it_was():
    sc = txop.scenario("default")
    sc["duration_s"] = 2
    with pytest.raises(txop.TxopError, match="duration_s"):
        sc["duration_s"] = -1
    assert sc.overrides == {"duration_s": 2} and sc["duration_s"] == 2.0


def test_frames_hold_what_the_results_hold():
    r = txop.run("default", duration_s=3)
    res = r.results
    assert len(r.flows) == len(res["flows"]) and len(r.stations) == len(res["stations"])
    assert r.stations["throughput_bps"].sum() == pytest.approx(res["total_throughput_bps"], rel=1e-9)
    f0 = res["flows"][0]
    assert r.flows.loc[0, "latency_p50_ms"] == f0["latency_ms"]["p50"]
    s = r.series
    assert s.index.name == "time_s"
    assert len(s) == len(f0["throughput_series_bps"])
    assert s.index[1] - s.index[0] == pytest.approx(res["series_step_s"])
    assert list(s[0]) == f0["throughput_series_bps"]
    assert r.bss is None


def test_write_writes_the_directory_txop_run_o_writes(cli, tmp_path):
    r = txop.run("tcp-ndown-6mbit", traffic__length_s=2)
    r.write(tmp_path / "py")
    code, _, _ = cli("run", "tcp-ndown-6mbit", "--set", "traffic.length_s=2", "-q", "-o", str(tmp_path / "cli"))
    assert code == 0
    files = sorted(p.name for p in (tmp_path / "cli").iterdir())
    assert any(f.endswith(".flent.gz") for f in files) and "latency-cdf.png" in files
    assert sorted(p.name for p in (tmp_path / "py").iterdir()) == files
    _match, mismatch, errors = filecmp.cmpfiles(tmp_path / "py", tmp_path / "cli", files, shallow=False)
    assert mismatch == [] and errors == []
    with pytest.raises(txop.TxopError, match="exists"):
        r.write(tmp_path / "py")


def test_compare_gives_the_bytes_of_txop_compare_json(cli):
    c = txop.compare("default", stacks=["linux-4.9", "linux-6.16"], vary={"duration_s": [1, 2]}, seed=4)
    code, out, _ = cli(
        "compare", "default", "--stack", "linux-4.9", "--stack", "linux-6.16",
        "--vary", "duration_s=1,2", "--seed", "4", "--json",
    )
    assert code == 0 and c.json.encode() == out
    assert len(c.runs) == 4


def test_compare_metric_vs_gives_the_command_lines_chart(cli, tmp_path):
    c = txop.compare(
        "default", stacks=["linux-4.9", "linux-6.16"],
        vary={"stations.list[0].count": [1, 2], "seed": [1, 2, 3]},
        metric_vs="stations.list[0].count", duration_s=0.5,
    )
    code, out, _ = cli(
        "compare", "default", "--stack", "linux-4.9", "--stack", "linux-6.16",
        "--vary", "stations.list[0].count=1,2", "--vary", "seed=1,2,3",
        "--metric-vs", "stations.list[0].count", "--set", "duration_s=0.5", "--json",
    )
    assert code == 0 and c.json.encode() == out
    vs = c.metric_vs
    assert vs is not None
    assert list(vs.index.names) == ["metric", "line", "x"]
    # Every point is the median and range of its three runs' own figures.
    runs = c.runs
    for (stack, count), point in vs.loc["total throughput"].iterrows():
        mine = runs[(runs["stack"] == stack) & (runs["stations.list[0].count"] == str(int(count)))]
        mbps = sorted(mine["total_throughput_bps"] / 1e6)
        assert (point["min"], point["median"], point["max"]) == (mbps[0], mbps[1], mbps[2])
        assert point["runs"] == 3
    c.write(tmp_path / "vs")
    assert (tmp_path / "vs" / "metric-vs-stations.list_0_.count.png").is_file()
    assert txop.compare("default", stacks=["linux-4.9", "linux-6.16"], duration_s=0.1).metric_vs is None
    with pytest.raises(txop.TxopError, match="does not vary"):
        txop.compare("default", stacks=["linux-4.9", "linux-6.16"], metric_vs="seed_x", duration_s=0.1)


def test_compare_over_several_bsss_has_a_row_per_setting_and_bss(cli):
    args = ["--stack", "linux-4.9", "--stack", "linux-6.16", "--set", "traffic.length_s=1"]
    c = txop.compare("apartment-block", stacks=["linux-4.9", "linux-6.16"], traffic__length_s=1)
    code, out, _ = cli("compare", "apartment-block", *args, "--json")
    assert code == 0 and c.json.encode() == out
    runs = c.runs
    assert list(runs.index.names) == ["label", "bss"] and len(runs) == 8
    for label, run in zip(["linux-4.9", "linux-6.16"], c.results["runs"]):
        for b in run["bss"]:
            assert runs.loc[(label, b["name"]), "total_throughput_bps"] == b["total_throughput_bps"]


def test_stacks_and_list_name_what_the_command_names(cli):
    _, out, _ = cli("list")
    text = out.decode()
    listing = txop.list()
    for name in listing["scenarios"]:
        assert f"  {name} " in text
    assert set(txop.stacks()) == set(listing["stacks"])
    _, out, _ = cli("stacks", "linux-6.16")
    assert out.decode().startswith("linux-6.16\n  " + txop.stacks()["linux-6.16"]["summary"])


def test_a_simulation_runs_without_the_gil():
    """While one thread simulates, this one keeps running: the gaps between its steps
    stay far below the simulation's length (with the GIL held they would span it)."""
    done = threading.Event()
    elapsed = []

    def simulate():
        t = time.perf_counter()
        txop.run("default", duration_s=900)
        elapsed.append(time.perf_counter() - t)
        done.set()

    th = threading.Thread(target=simulate)
    last, worst = time.perf_counter(), 0.0
    th.start()
    while not done.is_set():
        now = time.perf_counter()
        worst, last = max(worst, now - last), now
        time.sleep(0.001)
    th.join()
    assert elapsed[0] > 0.2, "the run is too short to tell"
    assert worst < elapsed[0] / 4, (worst, elapsed[0])


@pytest.mark.parametrize(
    "call, message",
    [
        # None and objects: once a recursion of ~1,000 frames (toml_literal <-> _toml_value).
        (lambda: txop.run("default", duration_s=None), "default: duration_s: None is not a scenario value"),
        (lambda: txop.scenario("default", {"stations.list": [{"count": object()}]}),
         "default: stations.list: <object object"),
        (lambda: txop.scenario("default", {1: 2}), "default: 1: a scenario key is a string"),
        # A seed of the wrong type or range: once a bare TypeError / OverflowError.
        (lambda: txop.run("default", seed="3"), "seed: expected a whole number"),
        (lambda: txop.run("default", seed=-1), "seed: expected a whole number"),
        (lambda: txop.compare("default", stacks=["linux-4.9", "linux-6.16"], seed=1.5),
         "seed: expected a whole number"),
        # A string where a list goes: once taken letter by letter (stack `l`).
        (lambda: txop.compare("default", stacks="linux-4.9"), "stacks: expected a list of stack names"),
        (lambda: txop.compare("default", vary={"stack": "linux-4.9"}), "vary stack: expected a list"),
        (lambda: txop.sweep("default", grid={"stack": "linux-4.9"}, progress=False),
         "grid stack: expected a list of values"),
        # A fractional seed: once truncated to 1 without a word.
        (lambda: txop.sweep("default", seeds=[1.5], progress=False), "seeds: expected a whole number"),
        # workers: the command line refuses 0; Python ran on the machine's cores.
        (lambda: txop.sweep("default", workers=0, progress=False), "workers: expected a whole number of at least 1"),
        (lambda: txop.compare("default", stacks=["linux-4.9", "linux-6.16"], workers=0),
         "workers: expected a whole number of at least 1"),
        (lambda: txop.scenario(None), "scenario: expected a path"),
        (lambda: txop.sweep("default", cache=3, progress=False), "cache: expected a path"),
        (lambda: txop.sweep("default", client=3, progress=False), "client: expected a dask.distributed Client"),
    ],
)
def test_a_value_of_the_wrong_type_raises_txop_error_naming_the_key(call, message):
    with pytest.raises(txop.TxopError) as e:
        call()
    assert str(e.value).startswith(message), str(e.value)
    assert "\n" not in str(e.value)


def test_tcp_frame_holds_each_senders_series(cli):
    sets = {"traffic.test": "tcp_1down", "traffic.cc": "bbr", "traffic.length_s": 3, "traffic.delay_s": 1}
    r = txop.run(txop.scenario("tcp-ndown-6mbit", sets))
    res = r.results
    f = next(f for f in res["flows"] if f["kind"] == "tcp")
    t = r.tcp.loc[f["flow"]]
    step = res["series_step_s"]
    assert list(t.index) == pytest.approx([(k + 1) * step for k in range(len(f["cwnd_series_bytes"]))])
    assert list(t["cwnd_bytes"]) == f["cwnd_series_bytes"]
    for column, key in [("srtt_ms", "srtt_series_ms"), ("pacing_rate_bps", "pacing_rate_series_bps")]:
        values = [math.nan if v is None else v for v in f[key]]
        assert list(t[column]) == pytest.approx(values, nan_ok=True)
    # BBR enters DRAIN and leaves it for PROBE_BW within one step here.
    assert list(t["bbr_modes"]).count("STARTUP+DRAIN+PROBE_BW") == 1
    assert t["bbr_modes"].iloc[-1] == "PROBE_BW"
    ping = next(f for f in res["flows"] if f["kind"] == "ping")
    assert ping["flow"] not in r.tcp.index.get_level_values("flow")
    args = [a for k, v in sets.items() for a in ("--set", f"{k}={v}")]
    code, out, _ = cli("run", "tcp-ndown-6mbit", *args, "--json")
    assert code == 0 and json.loads(out)["flows"] == res["flows"]


def test_budget_frame_is_results_delay_budget():
    sets = {"traffic.test": "tcp_1down", "traffic.length_s": 3, "traffic.delay_s": 1}
    r = txop.run(txop.scenario("tcp-ndown-6mbit", sets))
    b = r.budget
    for f in r.results["flows"]:
        fwd = f["delay_budget"]["forward"]
        if fwd is None:
            continue
        rows = b.loc[(f["flow"], "forward")]
        # The stages in the packet's order, and their sums add up to the delays.
        assert list(rows.index) == [s["stage"] for s in fwd["stages"]]
        assert int(rows["sum_ns"].sum()) == fwd["delay_sum_ns"]
        assert list(rows["mean_ms"]) == pytest.approx([s["mean_ms"] for s in fwd["stages"]])
    tcp = next(f for f in r.results["flows"] if f["kind"] == "tcp")
    # TCP's ACKs: means, no percentiles.
    acks = b.loc[(tcp["flow"], "back")]
    assert acks["p50_ms"].isna().all() and acks["mean_ms"].notna().all()
