"""txop.sweep and `txop sweep`: same numbers every way, fault tolerance, the cache,
the grid checked before anything runs."""

from __future__ import annotations

import collections
import gzip
import json
import os
import pathlib
import signal
import threading
import time

import pytest

import txop
from txop._sweep import parse_seeds


def events(path: pathlib.Path) -> list[tuple[str, str, int]]:
    """The sweep trace: (event, key, pid) per line."""
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        ev, key, pid = line.split()
        out.append((ev, key, int(pid)))
    return out


def cache_entries(cache: pathlib.Path) -> list[dict]:
    return [json.loads(gzip.open(p).read()) for p in sorted(cache.glob("*.json.gz"))]


@pytest.fixture
def trace(tmp_path, monkeypatch) -> pathlib.Path:
    path = tmp_path / "trace"
    monkeypatch.setenv("TXOP_SWEEP_TRACE", str(path))
    return path


def local_cluster():
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=None)
    return cluster, Client(cluster)


def test_a_point_on_a_two_worker_localcluster_equals_txop_run_and_the_cli(cli, tmp_path):
    cluster, client = local_cluster()
    with cluster, client:
        ds = txop.sweep("default", grid={"stack": ["linux-4.9", "linux-6.16"], "duration_s": [1, 2]},
                        seeds=[1, 2], client=client, cache=tmp_path / "cache", progress=False)
    assert (ds.error == "").all() and ds.attrs["points_failed"] == 0
    code, out, _ = cli("run", "default", "--set", "stack=linux-6.16", "--set", "duration_s=2",
                       "--seed", "2", "--json")
    assert code == 0
    r = txop.run("default", seed=2, stack="linux-6.16", duration_s=2)
    assert r.json.encode() == out
    # The cached run is the command's output, byte for byte.
    [entry] = [e for e in cache_entries(tmp_path / "cache")
               if e["seed"] == 2 and ["stack", "linux-6.16"] in e["sets"] and ["duration_s", "2"] in e["sets"]]
    assert entry["json"].encode() == out
    # And the dataset holds its numbers.
    p = ds.sel(stack="linux-6.16", duration_s=2, seed=2)
    res = r.results
    assert float(p.total_throughput_bps) == res["total_throughput_bps"]
    assert float(p.airtime_jain_index) == res["airtime_jain_index"]
    n = len(res["stations"])
    assert list(p.station_throughput_bps.values[:n]) == [s["throughput_bps"] for s in res["stations"]]
    assert list(p.flow_latency_p99_ms.values[: len(res["flows"])]) == [
        f["latency_ms"]["p99"] for f in res["flows"]]
    series = res["flows"][0]["throughput_series_bps"]
    assert list(p.flow_throughput_series_bps.values[0, : len(series)]) == series
    assert ds.attrs["txop_version"] == txop.__version__
    assert ds.attrs["scenario"] == txop.scenario("default").text


LONG_GRID = {"stations.list[0].count": [1, 2, 3], "stack": ["linux-4.9", "linux-6.16"]}


def kill_the_first_worker_to_start(trace: pathlib.Path, killed: list) -> threading.Thread:
    """A thread that waits for the first point to start and kills its worker (SIGKILL)."""

    def watch():
        deadline = time.time() + 60
        while time.time() < deadline:
            ev = [e for e in events(trace) if e[0] == "start"]
            if ev:
                _, key, pid = ev[0]
                os.kill(pid, signal.SIGKILL)
                killed.append((key, pid))
                return
            time.sleep(0.005)

    th = threading.Thread(target=watch, daemon=True)
    th.start()
    return th


def check_killed_point_redone_once(trace: pathlib.Path, killed: list, ds, points: int) -> None:
    assert killed, "no worker was killed"
    key, pid = killed[0]
    ev = events(trace)
    starts = collections.Counter(k for e, k, _ in ev if e == "start")
    dones = collections.Counter(k for e, k, _ in ev if e == "done")
    writes = collections.Counter(k for e, k, _ in ev if e == "write")
    # The kill landed mid-point: the killed worker never finished it ...
    assert ("done", key, pid) not in ev
    # ... another worker did, once; every other point ran once; each is cached once.
    assert starts[key] == 2
    assert all(n == 1 for k, n in starts.items() if k != key)
    assert len(dones) == points and all(n == 1 for n in dones.values())
    assert len(writes) == points and all(n == 1 for n in writes.values())
    # Nothing lost.
    assert (ds.error == "").all()
    assert int(ds.total_throughput_bps.notnull().sum()) == points


def test_a_worker_killed_mid_sweep_on_dask_loses_nothing_and_repeats_nothing(trace, tmp_path):
    cluster, client = local_cluster()  # after `trace`: the workers inherit TXOP_SWEEP_TRACE
    killed: list = []
    with cluster, client:
        th = kill_the_first_worker_to_start(trace, killed)
        ds = txop.sweep("default", grid=LONG_GRID, seeds=1, client=client, duration_s=300,
                        cache=tmp_path / "cache", progress=False)
        th.join()
    check_killed_point_redone_once(trace, killed, ds, 6)


def test_a_worker_killed_mid_sweep_on_the_local_pool_loses_nothing(trace, tmp_path):
    killed: list = []
    th = kill_the_first_worker_to_start(trace, killed)
    ds = txop.sweep("default", grid=LONG_GRID, seeds=1, workers=2, duration_s=300,
                    cache=tmp_path / "cache", progress=False)
    th.join()
    check_killed_point_redone_once(trace, killed, ds, 6)
    # A re-run computes nothing and gives the same dataset.
    before = len(events(trace))
    again = txop.sweep("default", grid=LONG_GRID, seeds=1, workers=2, duration_s=300,
                       cache=tmp_path / "cache", progress=False)
    assert len(events(trace)) == before
    assert again.identical(ds)


def test_a_sweep_stopped_part_way_resumes_with_only_the_missing_points(trace, tmp_path):
    """A sweep that got through seeds 1-2 (then stopped), run again over seeds 1-4,
    computes seeds 3-4 only, and gives what one uninterrupted sweep gives."""
    grid = {"stack": ["linux-4.9", "linux-6.16"]}
    txop.sweep("default", grid=grid, seeds=[1, 2], duration_s=1, cache=tmp_path / "c",
               workers=2, progress=False)
    first = {k for ev, k, _ in events(trace) if ev == "start"}
    full = txop.sweep("default", grid=grid, seeds=4, duration_s=1, cache=tmp_path / "c",
                      workers=2, progress=False)
    ev = events(trace)
    later = [k for e, k, _ in ev if e == "start"][len(first):]
    assert len(first) == 4 and len(later) == 4 and not (set(later) & first)
    assert collections.Counter(k for e, k, _ in ev if e == "write") == {k: 1 for k in first | set(later)}
    fresh = txop.sweep("default", grid=grid, seeds=4, duration_s=1, workers=2, progress=False)
    assert fresh.identical(full)


def test_points_run_longest_first(trace, tmp_path):
    txop.sweep("default", grid={"stations.list[0].count": [1, 5, 3]}, seeds=[7], workers=1,
               duration_s=1, cache=tmp_path / "cache", progress=False)
    count_of = {e["key"]: dict(map(tuple, e["sets"]))["stations.list[0].count"]
                for e in cache_entries(tmp_path / "cache")}
    order = [count_of[k] for ev, k, _ in events(trace) if ev == "start"]
    assert order == ["5", "3", "1"]


@pytest.mark.parametrize(
    "scenario, grid, message",
    [
        ("default", {"stations.cuont": [1, 2]}, "grid stations.cuont=1: default: stations.cuont: unknown key"),
        ("default", {"stack": ["linux-6.16", "linux-9"]}, "grid stack=linux-9: default: stack:"),
        ("default", {"duration_s": [1, -1]}, "grid duration_s=-1: default: duration_s:"),
        ("defualt", {"duration_s": [1]}, "defualt: no such scenario file or built-in scenario"),
    ],
)
def test_a_bad_grid_fails_before_any_point_runs(trace, tmp_path, scenario, grid, message):
    with pytest.raises(txop.TxopError) as e:
        txop.sweep(scenario, grid=grid, seeds=2, cache=tmp_path / "cache", progress=False)
    assert str(e.value).startswith(message), str(e.value)
    assert events(trace) == []
    assert not list((tmp_path / "cache").glob("*")) if (tmp_path / "cache").exists() else True


def test_an_invalid_combination_is_recorded_and_the_rest_runs(tmp_path):
    ds = txop.sweep("default", stack="linux-4.8-bloated", duration_s=1, progress=False,
                    grid={"stack": ["linux-4.8-bloated", "linux-6.16"],
                          "stack_options.mac80211_txqs": [False]},
                    seeds=2, cache=tmp_path / "cache")
    bad = ds.error.sel(stack="linux-6.16")
    assert all("it needs mac80211_txqs = true" in str(v) for v in bad.values.ravel())
    assert (ds.error.sel(stack="linux-4.8-bloated") == "").all()
    assert ds.total_throughput_bps.sel(stack="linux-4.8-bloated").notnull().all()
    assert ds.total_throughput_bps.sel(stack="linux-6.16").isnull().all()
    assert ds.attrs["points_failed"] == 2


def test_the_dataset_writes_to_netcdf_and_reads_back(tmp_path):
    import xarray as xr

    ds = txop.sweep("neighbours-in-range", grid={"duration_s": [1, 2]}, seeds=1,
                    progress=False, workers=1)
    assert ds.sizes["bss"] == 2 and ds.bss.values.tolist() == ["a", "b"]
    ds.to_netcdf(tmp_path / "s.nc")
    with xr.open_dataset(tmp_path / "s.nc") as back:
        assert back.identical(ds)


def test_txop_sweep_writes_the_dataset_and_a_directory_per_point(cli, tmp_path, trace):
    import xarray as xr

    args = ["sweep", "default", "--vary", "stack=linux-4.9,linux-6.16", "--set", "duration_s=1",
            "--seeds", "1-2", "--workers", "2", "-q", "-o", str(tmp_path / "sw")]
    code, _, err = cli(*args)
    assert code == 0, err
    with xr.open_dataset(tmp_path / "sw" / "sweep.nc") as ds:
        assert dict(ds.error.sizes) == {"stack": 2, "seed": 2}
        got = float(ds.total_throughput_bps.sel(stack="linux-4.9", seed=2))
    runs = sorted(p.name for p in (tmp_path / "sw" / "runs").iterdir())
    assert runs == ["stack=linux-4.9_seed=1", "stack=linux-4.9_seed=2",
                    "stack=linux-6.16_seed=1", "stack=linux-6.16_seed=2"]
    code, _, _ = cli("run", "default", "--set", "duration_s=1", "--set", "stack=linux-4.9",
                     "--seed", "2", "-q", "-o", str(tmp_path / "one"))
    assert code == 0
    one = tmp_path / "one" / "results.json"
    assert (tmp_path / "sw" / "runs" / "stack=linux-4.9_seed=2" / "results.json").read_bytes() == one.read_bytes()
    assert got == json.loads(one.read_text())["total_throughput_bps"]
    # The same command again computes nothing.
    before = len(events(trace))
    code, _, err = cli(*args)
    assert code == 0, err
    assert len(events(trace)) == before
    code, _, err = cli("sweep", "default", "--vary", "stack=linux-9", "-o", str(tmp_path / "x"))
    assert code == 2 and err.startswith("txop: error: grid stack=linux-9: default: stack:") and err.count("\n") == 1


def test_seeds_are_counts_ranges_or_lists():
    assert parse_seeds(3) == [1, 2, 3]
    assert parse_seeds("1-3,7") == [1, 2, 3, 7]
    assert parse_seeds([5, 2]) == [5, 2]
    for bad in (0, "3-1", "x", [1, 1], [-1]):
        with pytest.raises(txop.TxopError):
            parse_seeds(bad)
