"""txop.sweep and `txop sweep`: same numbers every way, fault tolerance, the cache,
the grid checked before anything runs."""

from __future__ import annotations

import collections
import gzip
import json
import math
import os
import pathlib
import signal
import statistics
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


def test_seeds_are_bounded_before_they_are_listed():
    """`--seeds 1-1000000000` once built a list of 10^9 ints (MemoryError); a count
    over MAX_RUNS is refused before anything is allocated."""
    from txop._sweep import MAX_RUNS

    for bad in ("1-1000000000", "1-100000000", f"1-{MAX_RUNS + 1}", MAX_RUNS + 1, range(1, 10**12)):
        with pytest.raises(txop.TxopError, match=f"at most {MAX_RUNS}"):
            parse_seeds(bad)
    assert len(parse_seeds(f"1-{MAX_RUNS}")) == MAX_RUNS
    with pytest.raises(txop.TxopError, match=f"at most {MAX_RUNS} in a sweep"):
        txop.sweep("default", grid={"duration_s": list(range(1, 1001))}, seeds=MAX_RUNS // 1000 + 1,
                   progress=False)


def test_txop_sweep_with_a_billion_seeds_is_one_line_within_a_small_memory_limit(txop_bin, tmp_path):
    import resource
    import subprocess

    def limit():  # 2 GiB of address space: far below what 10^9 seeds took (24 GB at 10^8)
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    for seeds in ("1-1000000000", "1-100000000"):
        p = subprocess.run([str(txop_bin), "sweep", "default", "--seeds", seeds, "-o", str(tmp_path / "o")],
                           capture_output=True, text=True, preexec_fn=limit, timeout=120, check=False)
        assert p.returncode == 2, p.stderr[-2000:]
        assert p.stderr.startswith(f"txop: error: seeds {seeds}: ") and p.stderr.count("\n") == 1, p.stderr
        assert not (tmp_path / "o").exists()


def test_seeds_n_is_1_to_n_as_the_help_says(cli, tmp_path):
    assert parse_seeds("3") == [1, 2, 3] == parse_seeds(3)
    assert parse_seeds("7-7") == [7] and parse_seeds("0,5") == [0, 5]
    code, _, err = cli("sweep", "default", "--seeds", "0", "-o", str(tmp_path / "o"))
    assert code == 2 and err == "txop: error: seeds 0: expected a count of at least 1 (seeds 1 to N)\n"
    assert not (tmp_path / "o").exists()


def test_varying_the_seed_is_refused_before_anything_runs(cli, tmp_path, trace):
    """Once every point ran and then xarray's traceback (two `seed` dimensions)."""
    code, _, err = cli("sweep", "default", "--vary", "seed=1,2", "--set", "duration_s=1", "-q",
                       "-o", str(tmp_path / "o"))
    assert code == 2 and err.startswith("txop: error: grid seed: ") and err.count("\n") == 1, err
    assert events(trace) == [] and not (tmp_path / "o").exists()


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def not_a_scheduler() -> int:
    """A port where a server answers every connection with an HTTP error, then closes."""
    import socket

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()

    def serve():
        while True:
            conn, _ = srv.accept()
            with conn:
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

    threading.Thread(target=serve, daemon=True).start()
    return srv.getsockname()[1]


def test_a_scheduler_that_is_not_there_is_one_line_and_leaves_no_folder(cli, tmp_path):
    for address, why in [("bogus", "missing port number"),
                         (f"tcp://127.0.0.1:{free_port()}", "Connection refused"),
                         (f"tcp://127.0.0.1:{not_a_scheduler()}", "not as a Dask scheduler does")]:
        out = tmp_path / "o"
        code, _, err = cli("sweep", "default", "--scheduler", address, "--set", "duration_s=1", "-q",
                           "-o", str(out))
        assert code == 2, err
        assert err.startswith(f"txop: error: scheduler {address}: cannot connect: ") and why in err, err
        assert err.count("\n") == 1, err
        assert not out.exists()
    with pytest.raises(txop.TxopError, match="scheduler bogus: cannot connect"):
        txop.sweep("default", client="bogus", progress=False)


def test_txop_sweep_stores_numbers_as_numbers(cli, tmp_path):
    import xarray as xr

    key = "stations.list[0].count"
    code, _, err = cli("sweep", "default", "--vary", f"{key}=2,1,10", "--vary", "stack=linux-6.16",
                       "--set", "duration_s=1", "--workers", "2", "-q", "-o", str(tmp_path / "o"))
    assert code == 0, err
    with xr.open_dataset(tmp_path / "o" / "sweep.nc") as ds:
        assert ds[key].dtype.kind == "i" and ds[key].values.tolist() == [2, 1, 10]
        assert ds["stack"].values.tolist() == ["linux-6.16"]
        got = ds.total_throughput_bps.sel({key: 10, "stack": "linux-6.16", "seed": 1}).item()
    py = txop.sweep("default", grid={key: [2, 1, 10], "stack": ["linux-6.16"]}, duration_s=1,
                    workers=1, progress=False)
    assert py[key].dtype == ds[key].dtype
    assert got == py.total_throughput_bps.sel({key: 10, "stack": "linux-6.16", "seed": 1}).item()


def test_sweeping_again_into_a_folder_replaces_its_point_folders(cli, tmp_path, trace):
    out = tmp_path / "o"
    runs = out / "runs"

    def sweep(*args):
        return cli("sweep", "default", "--seeds", "1", "-q", "--workers", "2", "-o", str(out), *args)

    code, _, err = sweep("--vary", "stack=linux-4.9,linux-6.16", "--set", "duration_s=1")
    assert code == 0, err
    code, _, err = sweep("--vary", "stack=linux-4.9", "--set", "duration_s=2")
    assert code == 0, err
    # The point folder holds this sweep's results (2 s), not the first sweep's (1 s) ...
    point = runs / "stack=linux-4.9_seed=1"
    got = json.loads((point / "results.json").read_text())
    code, _, _ = cli("run", "default", "--set", "stack=linux-4.9", "--set", "duration_s=2", "-q",
                     "-o", str(tmp_path / "one"))
    assert code == 0
    assert got == json.loads((tmp_path / "one" / "results.json").read_text())
    # ... and the first sweep's other point, not one of this sweep, is gone ...
    assert sorted(p.name for p in runs.iterdir()) == ["stack=linux-4.9_seed=1"]
    # ... and a user's file in a point folder stops the sweep before any point runs.
    (point / "notes.txt").write_text("mine")
    before = len(events(trace))
    code, _, err = sweep("--vary", "stack=linux-4.9", "--set", "duration_s=1")
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith(f"txop: error: {point}: ") and "notes.txt" in err, err
    assert len(events(trace)) == before
    assert (point / "notes.txt").read_text() == "mine"


def test_a_rebuilt_model_does_not_reuse_the_cache(tmp_path, trace):
    """The same version with another native module (here: the module's file with a
    byte appended, which still loads) computes every point again."""
    import shutil
    import subprocess
    import sys

    pkg = pathlib.Path(txop.__file__).parent
    other = tmp_path / "other"
    shutil.copytree(pkg, other / "txop")
    native = other / "txop" / pathlib.Path(txop._txop.__file__).name
    with open(native, "ab") as f:
        f.write(b"\0")
    script = ("import sys, txop; txop.sweep('default', grid={'stack': ['linux-4.9']}, duration_s=1, "
              "seeds=2, workers=1, cache=sys.argv[1], progress=False)")

    def sweep(pythonpath):
        env = dict(os.environ, PYTHONPATH=str(pythonpath))
        p = subprocess.run([sys.executable, "-c", script, str(tmp_path / "cache")], cwd=tmp_path,
                           env=env, capture_output=True, text=True, timeout=300, check=False)
        assert p.returncode == 0, p.stderr
        return [k for e, k, _ in events(trace) if e == "start"]

    first = sweep(pkg.parent)
    assert len(first) == 2
    assert sweep(pkg.parent) == first  # the same build: all from the cache
    again = sweep(other)
    assert len(again) == 4 and not set(again[2:]) & set(first)


def test_a_script_without_the_main_guard_gets_one_line(tmp_path):
    import subprocess
    import sys

    script = tmp_path / "noguard.py"
    script.write_text("import txop\n"
                      "txop.sweep('default', grid={'stack': ['linux-4.9', 'linux-6.16']}, "
                      "duration_s=1, workers=2, progress=False)\n")
    p = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
                       timeout=300, check=False)
    assert p.returncode == 1
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("_txop.TxopError: txop.sweep: the script that calls it has no "
                           '`if __name__ == "__main__":` guard'), p.stderr[-3000:]
    # The script's own traceback, not the workers' (which once printed thousands of lines).
    assert p.stderr.count("Traceback") == 1, p.stderr[-3000:]
    guarded = tmp_path / "guarded.py"
    guarded.write_text("import txop\n\nif __name__ == '__main__':\n"
                       "    ds = txop.sweep('default', grid={'stack': ['linux-4.9', 'linux-6.16']}, "
                       "duration_s=1, workers=2, progress=False)\n"
                       "    print(int(ds.attrs['points_failed']))\n")
    p = subprocess.run([sys.executable, str(guarded)], cwd=tmp_path, capture_output=True, text=True,
                       timeout=300, check=False)
    assert p.returncode == 0 and p.stdout == "0\n", p.stderr[-3000:]


def descendants(pid: int) -> set[int]:
    """Every process below ``pid``, from /proc."""
    children: dict[int, list[int]] = collections.defaultdict(list)
    for d in pathlib.Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children[ppid].append(int(d.name))
    out, todo = set(), [pid]
    while todo:
        for c in children[todo.pop()]:
            out.add(c)
            todo.append(c)
    return out


def alive(pid: int) -> bool:
    try:
        stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_signal_to_txop_sweep_ends_everything_it_started(txop_bin, tmp_path, trace, sig):
    import subprocess

    p = subprocess.Popen([str(txop_bin), "sweep", "default", "--set", "duration_s=86400", "--seeds", "1-2",
                          "--workers", "2", "-q", "-o", str(tmp_path / "o")],
                         stderr=subprocess.PIPE, text=True)
    started: set[int] = set()
    below: set[int] = set()
    try:
        deadline = time.time() + 120
        while len(started) < 2 and time.time() < deadline:
            started = {pid for e, _, pid in events(trace) if e == "start"}
            time.sleep(0.05)
        assert len(started) == 2, "the workers did not start"
        below = descendants(p.pid)
        assert started <= below | {p.pid}
        p.send_signal(sig)
        p.wait(timeout=30)
        deadline = time.time() + 15  # a point runs for minutes: only a signal ends it sooner
        while any(alive(q) for q in below) and time.time() < deadline:
            time.sleep(0.05)
        assert not [q for q in below if alive(q)], "processes of the sweep still running"
        if sig == signal.SIGTERM:
            err = p.stderr.read()
            assert p.returncode == 128 + signal.SIGTERM
            assert err == "txop: stopped by SIGTERM; run the same command again to resume\n"
    finally:
        p.kill()
        p.wait()
        for q in started | below:  # whatever this test started and left
            if alive(q):
                os.kill(q, signal.SIGKILL)


def test_the_example_script_sweeps_under_the_main_guard():
    import subprocess
    import sys

    script = pathlib.Path(__file__).resolve().parents[2] / "examples" / "sweep.py"
    assert 'if __name__ == "__main__":' in script.read_text()
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                       check=False)
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.splitlines()[0].split() == ["stack", "linux-4.9", "linux-6.16"], p.stdout


def test_a_sweep_over_one_bss_key_equals_txop_run_per_bss(cli, tmp_path):
    """A grid axis over one BSS's key (``bss[1].stack``) of a scenario of several BSSs
    (issue 26: a sweep side by side over a ``[[bss]]`` key): every point's per-BSS
    throughput is the command line's for the same settings, and the axis moves it."""
    stacks = ["linux-4.8-bloated", "linux-6.16"]
    ds = txop.sweep("neighbours-in-range", grid={"bss[1].stack": stacks}, seeds=[1],
                    workers=2, cache=tmp_path / "cache", progress=False,
                    **{"traffic.length_s": 2})
    assert (ds.error == "").all() and ds.attrs["points_failed"] == 0
    assert list(ds.bss.values) == ["a", "b"]
    per_stack = {}
    for stack in stacks:
        code, out, err = cli("run", "neighbours-in-range", "--set", f"bss[1].stack={stack}",
                             "--set", "traffic.length_s=2", "--json")
        assert code == 0, err
        for b in json.loads(out)["bss"]:
            point = {"bss[1].stack": stack, "seed": 1, "bss": b["name"]}
            got = float(ds.total_throughput_bps.sel(point))
            assert got == b["total_throughput_bps"], (point, got)
            per_stack[(stack, b["name"])] = got
    assert any(per_stack[(stacks[0], b)] != per_stack[(stacks[1], b)] for b in ["a", "b"])


def test_the_flow_dimension_names_every_flow_and_gives_pings_their_rtt(cli):
    """Each flow of a point carries its kind, name and ends (issue 27: a bare index
    before), as ``txop run --json`` gives them; an echo flow's ``flow_delay_*`` is its
    RTT (its one-way ``flow_latency_*`` is NaN), a TCP flow's its one-way latency."""
    sets = {"traffic.test": "rrul", "traffic.length_s": 2}
    ds = txop.sweep("tcp-ndown-6mbit", grid={"stack": ["linux-6.16"]}, seeds=[1],
                    workers=1, progress=False, **sets)
    code, out, err = cli("run", "tcp-ndown-6mbit", "--set", "traffic.test=rrul",
                         "--set", "traffic.length_s=2", "--set", "stack=linux-6.16", "--json")
    assert code == 0, err
    flows = json.loads(out)["flows"]
    point = ds.isel(stack=0, seed=0)
    assert point.flow_name.values.tolist() == [f["name"] for f in flows]
    assert point.flow_kind.values.tolist() == [f["kind"] for f in flows]
    assert point.flow_src.values.tolist() == [f["src"] for f in flows]
    assert point.flow_dst.values.tolist() == [f["dst"] for f in flows]
    kinds = set(point.flow_kind.values.tolist())
    assert {"tcp", "ping", "udp_ping"} <= kinds, kinds
    for i, f in enumerate(flows):
        delay = float(point.flow_delay_p50_ms[i])
        if f["kind"] in ("ping", "udp_ping"):
            assert delay == f["rtt_ms"]["p50"]
            assert math.isnan(float(point.flow_latency_p50_ms[i]))
        elif f["latency_ms"] is not None:
            assert delay == f["latency_ms"]["p50"]


def test_the_delay_budget_is_in_the_dataset_as_the_run_gives_it(cli, tmp_path):
    """The delay budget (issue 27) as flow × direction × stage: every stage's mean,
    p50 and p99 and every direction's packets equal ``txop run --json``'s, NaN where
    the run has none (a direction no packet took, TCP's ACKs' percentiles); a
    direction's means add up to its mean delay. Through ``txop sweep`` and its
    netCDF file too."""
    import xarray as xr

    sets = {"traffic.test": "rrul", "traffic.length_s": 2}
    ds = txop.sweep("tcp-ndown-6mbit", grid={"stack": ["linux-4.8-bloated", "linux-6.16"]},
                    seeds=[1], workers=1, progress=False, **sets)
    assert ds.flow_budget_mean_ms.dims[-3:] == ("flow", "direction", "stage")
    assert ds.direction.values.tolist() == ["forward", "back"]
    assert ds.stage.values.tolist() == ["to_cell", "qdisc", "txq", "driver", "access",
                                        "retries", "air", "reorder", "from_cell"]
    checked = collections.Counter()
    for stack in ds["stack"].values.tolist():
        code, out, err = cli("run", "tcp-ndown-6mbit", "--set", "traffic.test=rrul",
                             "--set", "traffic.length_s=2", "--set", f"stack={stack}", "--json")
        assert code == 0, err
        point = ds.sel(stack=stack, seed=1)
        for i, f in enumerate(json.loads(out)["flows"]):
            for direction in ("forward", "back"):
                at = {"flow": i, "direction": direction}
                b = f["delay_budget"][direction]
                packets = float(point.flow_budget_packets.sel(at))
                if b is None:
                    assert math.isnan(packets)
                    assert point.flow_budget_mean_ms.sel(at).isnull().all()
                    continue
                assert packets == b["packets"]
                checked["directions"] += 1
                checked["acks"] += f["kind"] == "tcp" and direction == "back"
                for s in b["stages"]:
                    for k in ("mean_ms", "p50_ms", "p99_ms"):
                        got = float(point[f"flow_budget_{k}"].sel(at | {"stage": s["stage"]}))
                        if s[k] is None:
                            assert math.isnan(got), (stack, i, direction, s["stage"], k)
                        else:
                            assert got == s[k], (stack, i, direction, s["stage"], k, got)
                        checked[k] += s[k] is not None
                total = float(point.flow_budget_mean_ms.sel(at).sum("stage"))
                mean = b["delay_sum_ns"] / b["packets"] / 1e6
                assert abs(total - mean) <= 1e-9 * max(mean, 1.0), (stack, i, direction)
    # rrul, 12 flows under each of the two stacks, most of them both ways; TCP's ACKs
    # have means only.
    assert checked["directions"] > 2 * 12 and checked["acks"] > 0, checked
    assert checked["mean_ms"] == checked["directions"] * 9, checked
    assert checked["p50_ms"] == checked["p99_ms"] == (checked["directions"] - checked["acks"]) * 9

    code, _, err = cli("sweep", "tcp-ndown-6mbit", "--vary", "stack=linux-4.8-bloated,linux-6.16",
                       "--set", "traffic.test=rrul", "--set", "traffic.length_s=2",
                       "--workers", "1", "-o", str(tmp_path / "out"))
    assert code == 0, err
    with xr.open_dataset(tmp_path / "out" / "sweep.nc") as back:
        for k in ("flow_budget_mean_ms", "flow_budget_p99_ms", "flow_budget_packets"):
            xr.testing.assert_identical(back[k].squeeze(drop=True).load(),
                                        ds[k].squeeze(drop=True))


def test_txop_sweep_metric_vs_charts_what_compare_charts(cli, tmp_path):
    """`txop sweep --metric-vs KEY` and `txop compare --metric-vs KEY` over the same
    runs (stacks x station counts x seeds) give the same chart: the sweep's points,
    each run in a worker process, regrouped by the same code as the comparison's."""
    key = "stations.list[0].count"
    code, out, err = cli(
        "sweep", "default", "--vary", "stack=linux-4.9,linux-6.16", "--vary", f"{key}=1,3",
        "--set", "duration_s=0.5", "--seeds", "1-3", "--workers", "2", "--metric-vs", key,
        "-o", str(tmp_path / "sw"))
    assert code == 0, err
    text = out.decode()
    assert f"default: vs {key}, median and range over 3 seeds" in text
    code, cmp_json, err = cli(
        "compare", "default", "--stack", "linux-4.9", "--stack", "linux-6.16",
        "--vary", f"{key}=1,3", "--vary", "seed=1,2,3", "--set", "duration_s=0.5",
        "--metric-vs", key, "--json")
    assert code == 0, err
    want = json.loads(cmp_json)["metric_vs"]
    import xarray as xr

    with xr.open_dataset(tmp_path / "sw" / "sweep.nc") as ds:
        chart = txop.metric_vs(ds, key)
        # The dataset's headline delay is each run's own: in `default`, the median of
        # its probes' one-way p50s (its measurement flows), the highest of their p99s.
        runs = json.loads(cmp_json)["runs"]
        for r in runs:
            probes = [f["latency_ms"] for f in r["flows"] if f["kind"] == "probe"]
            assert len(probes) >= 2
            at = {"stack": r["settings"]["stack"], key: int(r["settings"][key]),
                  "seed": int(r["settings"]["seed"])}
            assert float(ds.delay_p50_ms.sel(at)) == statistics.median(p["p50"] for p in probes)
            assert float(ds.delay_p99_ms.sel(at)) == max(p["p99"] for p in probes)
    assert chart.results == want
    assert (tmp_path / "sw" / "metric-vs-stations.list_0_.count.txt").read_text() == chart.table
    assert (tmp_path / "sw" / "metric-vs-stations.list_0_.count.png").read_bytes()[1:4] == b"PNG"
    frame = chart.points
    assert frame.loc[("total throughput", "linux-6.16", 3.0), "runs"] == 3


def test_txop_sweep_metric_vs_refuses_before_anything_runs(cli, tmp_path, trace):
    for key, words in [("seed", "the seeds give each point its range"),
                       ("duration_s", "does not vary `duration_s`"),
                       ("stack", "`linux-4.9` is not a number")]:
        code, _, err = cli("sweep", "default", "--vary", "stack=linux-4.9,linux-6.16",
                           "--metric-vs", key, "-o", str(tmp_path / "x"))
        assert code == 2 and f"--metric-vs {key}: " in err and words in err, err
        assert err.count("\n") == 1
    assert events(trace) == []
    assert not (tmp_path / "x").exists()
