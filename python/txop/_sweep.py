"""Sweeps: a scenario over the product of a grid of keys and values, times seeds, on a
local process pool or a ``dask.distributed`` cluster, with a result cache on disk;
the results as an ``xarray.Dataset``.

How it runs:

- The whole grid is checked before any point runs: every key and value alone on the
  base scenario (an unknown one raises :class:`txop.TxopError` naming it), then every
  combination (one the model refuses, say ``stations.count`` with ``stations.list``,
  is recorded as a failed point with its error, and the others run).
- Points run costliest first (nodes x simulated seconds), so that the last ones to
  finish are short.
- At most :data:`MAX_RUNS` runs (points x seeds), counted before anything is listed.
- Each point's result is cached in ``cache`` as ``<key>.json.gz``, the key a SHA-256
  of (txop version, :func:`build_id`, scenario name, fully resolved scenario text,
  seed). The file is
  written under a temporary name and linked into place, never overwritten: a second
  result for the same key is dropped, so a point is in the cache once. A re-run (or
  an interrupted sweep run again) computes only the points not in the cache.
- On the local pool each worker process takes one point at a time; a worker that
  dies (killed, out of memory) is replaced and only its point is given again. The
  workers are spawned and import the caller's main script: one that starts a sweep at
  import (no main guard) is told so in one line. A sweep ended early (an error, a
  signal) stops its busy workers at once; on Linux a worker also dies with its parent. On
  Dask, the scheduler does the same (``distributed.scheduler.allowed-failures``); a
  point whose workers die every time is recorded as failed, and not cached.
- Setting ``TXOP_SWEEP_TRACE=FILE`` appends a line per event (``start KEY PID``,
  ``done KEY PID`` in the workers, ``write KEY`` in the caller) to FILE: how the tests
  count evaluations and cache writes.
"""

from __future__ import annotations

import gzip
import hashlib
import itertools
import json
import math
import os
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
)

from . import _txop
from ._api import (
    Scenario,
    _as_scenario,
    _key,
    _path,
    budget_rows,
    chart_points,
    check_seed,
    check_workers,
    flow_rows,
    set_text,
    station_rows,
    toml_literal,
    values_of,
)

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["MetricChart", "evaluate", "metric_vs", "parse_seeds", "point_label", "sweep"]

TRACE_ENV = "TXOP_SWEEP_TRACE"
# 2: entries keep the run's headline figures (`--metric-vs`).
CACHE_FORMAT = 2

#: At most this many runs (grid points x seeds) in one sweep, counted before anything
#: is listed. Each run costs the caller a task, its results and a slice of every array
#: of the dataset, all held until the dataset is built: measured 37 kB a run for
#: `default` (15 s, two flows), so ~1.9 GB at the cap, more with many flows or long
#: series. A larger study is several sweeps over one cache (split the seeds).
MAX_RUNS = 50_000

#: The exit code of a local pool's worker that found itself importing a script that
#: starts a sweep at import (no ``if __name__ == "__main__":`` guard).
_NO_MAIN_GUARD_EXIT = 87

NO_MAIN_GUARD = (
    "txop.sweep: the script that calls it has no `if __name__ == \"__main__\":` guard, "
    "so every worker process, importing the script, starts a sweep of its own; call "
    "txop.sweep under that guard (docs/python.md, examples/sweep.py)"
)


def _trace(event: str, key: str) -> None:
    path = os.environ.get(TRACE_ENV)
    if not path:
        return
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, f"{event} {key} {os.getpid()}\n".encode())
    finally:
        os.close(fd)


def parse_seeds(seeds: int | str | Iterable[int]) -> list[int]:
    """Seeds as ``sweep`` takes them: a count ``n`` (seeds 1 to n, as an ``int`` or as
    the text ``"n"``), a text ``"1-10"`` or ``"1,3,7"`` (ranges and lists may mix), or
    any iterable of whole numbers; at most :data:`MAX_RUNS` of them, counted before
    any is listed."""
    if isinstance(seeds, bool):
        raise _txop.TxopError(f"seeds: expected a count, a range like 1-10 or a list, not {seeds!r}")
    if isinstance(seeds, str) and seeds.strip().isdigit():
        seeds = int(seeds.strip())  # "N" is a count, as the int N
    if isinstance(seeds, int):
        if seeds < 1:
            raise _txop.TxopError(f"seeds {seeds}: expected a count of at least 1 (seeds 1 to N)")
        _check_runs(f"seeds {seeds}", seeds)
        return list(range(1, seeds + 1))
    if isinstance(seeds, str):
        import re

        ranges: list[tuple[int, int]] = []
        for part in seeds.split(","):
            m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
            if m is None or (m.group(2) is not None and int(m.group(2)) < int(m.group(1))):
                raise _txop.TxopError(
                    f"seeds {seeds}: expected N, A-B or a comma-separated list of them"
                )
            lo = int(m.group(1))
            ranges.append((lo, int(m.group(2) or lo)))
        _check_runs(f"seeds {seeds}", sum(hi - lo + 1 for lo, hi in ranges))
        seeds = [s for lo, hi in ranges for s in range(lo, hi + 1)]
    if not isinstance(seeds, Iterable):
        raise _txop.TxopError(f"seeds: expected a count, a range like 1-10 or a list, not {seeds!r}")
    result = [
        check_seed(s, "seeds") for s in itertools.islice(seeds, MAX_RUNS + 1)  # type: ignore[misc]
    ]
    if len(result) > MAX_RUNS:
        raise _txop.TxopError(f"seeds: more than {MAX_RUNS} seeds; at most {MAX_RUNS} runs in a sweep")
    if not result:
        raise _txop.TxopError("seeds: expected at least one seed")
    if len(set(result)) != len(result):
        raise _txop.TxopError("seeds: a seed is given twice")
    return result  # type: ignore[return-value]


def _check_runs(what: str, runs: int) -> None:
    if runs > MAX_RUNS:
        raise _txop.TxopError(
            f"{what}: {runs} runs; at most {MAX_RUNS} in a sweep "
            "(split it into several sweeps over one cache)"
        )


def point_label(point: Mapping[str, Any], seed: int) -> str:
    """A point as text: ``stack=linux-4.9, stations.count=4, seed 3``."""
    parts = [f"{k}={toml_literal(v)}" for k, v in point.items()]
    return ", ".join(parts + [f"seed {seed}"])


def _slug(text: str) -> str:
    """``text`` as a file name: letters, digits, ``.-_=`` kept, the rest ``_``."""
    out = "".join(c if c.isalnum() or c in ".-_=" else "_" for c in text)
    return out.strip("._") or "point"


@dataclass
class _Task:
    """One point x seed to run."""

    key: str
    index: tuple[int, ...]  # the grid indices, then the seed's
    point: dict[str, Any]
    seed: int
    sets: list[tuple[str, str]]
    cost: float
    want_files: bool = False
    attempts: int = 0

    def payload(self, spec: str) -> dict[str, Any]:
        return {
            "key": self.key,
            "spec": spec,
            "sets": self.sets,
            "seed": self.seed,
            "want_files": self.want_files,
        }


def evaluate(payload: Mapping[str, Any]) -> dict[str, Any]:
    """Run one point (in a worker): ``{"ok": True, "json": …}`` with the run's
    ``--json`` text (and the results directory's ``files`` if asked), or ``{"ok":
    False, "error": …}`` with the line txop gives for a bad input or an internal
    error. Never raises for txop's own errors: a failing point is a result."""
    key = payload["key"]
    _trace("start", key)
    started = time.perf_counter()
    try:
        native = _txop.run(payload["spec"], [tuple(s) for s in payload["sets"]], payload["seed"])
        out: dict[str, Any] = {"ok": True, "json": native.json(), "headline": native.headline()}
        if payload.get("want_files"):
            out["files"] = native.files()
    except (_txop.TxopError, _txop.TxopInternalError) as e:
        out = {"ok": False, "error": str(e)}
    out["elapsed_s"] = time.perf_counter() - started
    out["pid"] = os.getpid()
    _trace("done", key)
    return out


_BUILD_ID: str | None = None


def build_id() -> str:
    """The SHA-256 (hex, 16 digits) of the native module's file, which holds the whole
    model: it changes with every rebuild that changes the model, whatever the version
    string says, so that a cache never serves results of another build."""
    global _BUILD_ID
    if _BUILD_ID is None:
        h = hashlib.sha256()
        with open(_txop.__file__, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        _BUILD_ID = h.hexdigest()[:16]
    return _BUILD_ID


def _cache_key(name: str, text: str, seed: int) -> str:
    h = hashlib.sha256()
    h.update(f"txop {_txop.__version__}\nbuild {build_id()}\nname {name}\nseed {seed}\n".encode())
    h.update(text.encode())
    return h.hexdigest()


class _Cache:
    """Points' results on disk, one gzipped JSON file per key, each written once."""

    def __init__(self, directory: str | None):
        self.dir = directory
        if directory is not None:
            os.makedirs(directory, exist_ok=True)

    def path(self, key: str) -> str | None:
        return None if self.dir is None else os.path.join(self.dir, f"{key}.json.gz")

    def load(self, key: str) -> dict[str, Any] | None:
        path = self.path(key)
        if path is None or not os.path.exists(path):
            return None
        try:
            with gzip.open(path, "rt", encoding="utf-8") as f:
                entry = json.load(f)
        except (OSError, ValueError, EOFError):
            return None  # unreadable: computed again (and not overwritten)
        if entry.get("format") != CACHE_FORMAT or entry.get("key") != key:
            return None
        return entry

    def store(self, entry: dict[str, Any]) -> bool:
        """Write ``entry`` under its key unless it is there already: written to a
        temporary file in the cache directory, then hard-linked into place (which
        fails if the name exists), so that a reader sees a whole file or none and a
        key is written once. Returns whether it wrote."""
        path = self.path(entry["key"])
        if path is None:
            return False
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json.gz", dir=self.dir)
        try:
            with os.fdopen(fd, "wb") as raw:
                with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
                    f.write(json.dumps(entry).encode("utf-8"))
                raw.flush()
                os.fsync(raw.fileno())
            try:
                os.link(tmp, path)
            except FileExistsError:
                return False
            _trace("write", entry["key"])
            return True
        finally:
            os.unlink(tmp)


# ---------------------------------------------------------------------------------
# Engines: each runs tasks and calls on_done(task, output) as each finishes.


def _run_local(
    spec: str,
    tasks: list[_Task],
    workers: int,
    on_done: Callable[[_Task, dict[str, Any]], None],
    max_attempts: int = 3,
) -> None:
    """A pool of ``workers`` processes (spawned), one point each at a time; a worker
    that dies is replaced and its point given again, at most ``max_attempts`` times."""
    import multiprocessing as mp
    from multiprocessing.connection import wait

    ctx = mp.get_context("spawn")
    queue = list(tasks)  # costliest first
    queue.reverse()  # pop() from the end
    slots: list[dict[str, Any]] = []

    def start() -> dict[str, Any]:
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_worker_main, args=(child, os.getpid()), daemon=True)
        proc.start()
        child.close()
        return {"proc": proc, "conn": parent, "task": None}

    try:
        for _ in range(max(1, min(workers, len(tasks)))):
            slots.append(start())
        def refill() -> None:
            for s in slots:
                if s["task"] is None and queue:
                    task = queue.pop()
                    task.attempts += 1
                    s["task"] = task
                    s["conn"].send(task.payload(spec))

        while queue or any(s["task"] is not None for s in slots):
            refill()
            busy = [s for s in slots if s["task"] is not None]
            ready = wait([s["conn"] for s in busy] + [s["proc"].sentinel for s in busy])
            finished = []
            for i, s in enumerate(slots):
                if s["task"] is None:
                    continue
                if s["conn"] in ready or s["proc"].sentinel in ready:
                    try:
                        out = s["conn"].recv() if s["conn"].poll() else None
                    except (EOFError, OSError):
                        out = None
                    task, s["task"] = s["task"], None
                    if out is not None:
                        finished.append((task, out))
                        continue
                    # The worker died with the point: replace it, give the point again.
                    s["conn"].close()
                    s["proc"].join(timeout=5)
                    if s["proc"].exitcode == _NO_MAIN_GUARD_EXIT:
                        raise _txop.TxopError(NO_MAIN_GUARD)
                    slots[i] = start()
                    if task.attempts >= max_attempts:
                        finished.append((task, _died(task.attempts)))
                    else:
                        queue.append(task)
            # The workers get their next points before this process files the results.
            refill()
            for task, out in finished:
                on_done(task, out)
    finally:
        # Idle workers are told to stop; a worker still running a point is left only
        # when this ends early (an error, Ctrl-C, SIGTERM): it is stopped at once.
        for s in slots:
            if s["task"] is not None:
                s["proc"].terminate()
                continue
            try:
                s["conn"].send(None)
            except (OSError, BrokenPipeError):
                pass
        for s in slots:
            s["proc"].join(timeout=5)
            if s["proc"].is_alive():
                s["proc"].kill()
                s["proc"].join(timeout=5)


def _died(attempts: int) -> dict[str, Any]:
    return {
        "ok": False,
        "error": f"txop: internal error: the worker running it died {attempts} times",
        "transient": True,
    }


def _worker_main(conn: Any, parent_pid: int) -> None:
    """A local pool's worker: points from ``conn`` until ``None``."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the caller decides; Ctrl-C stops it
    _die_with_parent(parent_pid)
    while True:
        try:
            payload = conn.recv()
        except EOFError:
            return
        if payload is None:
            return
        conn.send(evaluate(payload))


def _die_with_parent(parent_pid: int) -> None:
    """On Linux, have the kernel kill this worker when the process that started it
    ends, however it ends (``prctl(PR_SET_PDEATHSIG)``, kernel/sys.c): a sweep killed
    with SIGKILL leaves no worker running its point."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1  # include/uapi/linux/prctl.h
        libc.prctl(pr_set_pdeathsig, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent_pid:  # the parent ended before the prctl
        os._exit(1)


def _importing_main_in_a_worker() -> bool:
    """Whether this process is a spawned worker still importing the parent's main
    script: what multiprocessing's own ``_check_not_importing_main`` tests."""
    import multiprocessing.process

    return bool(getattr(multiprocessing.process.current_process(), "_inheriting", False))


def connect(address: str, timeout_s: float = 10.0) -> Any:
    """A ``dask.distributed`` client of the scheduler at ``address``, or one line
    (:class:`txop.TxopError`) within a few seconds: a TCP address is tried first with a
    plain connection (refused at once where nothing listens), then the client waits at
    most ``timeout_s`` for the scheduler's handshake."""
    import socket

    try:
        from distributed import Client
        from distributed.comm.addressing import parse_address, parse_host_port
    except ImportError as e:
        raise _txop.TxopError(
            f"scheduler {address}: a Dask cluster needs dask.distributed ({e})"
        ) from None
    try:
        scheme, loc = parse_address(address)
        if scheme in ("tcp", "tls"):
            host, port = parse_host_port(loc)
            with socket.create_connection((host, port), timeout=timeout_s / 2):
                pass
        return Client(address, timeout=f"{timeout_s}s")
    except Exception as e:  # noqa: BLE001 - whatever the address answers, one line
        why = (str(e).splitlines() or [type(e).__name__])[0]
        if not isinstance(e, (ValueError, OSError)):  # something else listens there
            why = f"something answered, but not as a Dask scheduler does ({type(e).__name__})"
        raise _txop.TxopError(f"scheduler {address}: cannot connect: {why}") from None


def _run_dask(
    spec: str,
    tasks: list[_Task],
    client: Any,
    on_done: Callable[[_Task, dict[str, Any]], None],
) -> None:
    """The tasks on a ``dask.distributed`` client, costliest first (by priority)."""
    from distributed import as_completed

    nonce = os.urandom(4).hex()
    futures = {}
    for rank, task in enumerate(tasks):
        fut = client.submit(
            evaluate,
            task.payload(spec),
            key=f"txop-{task.key[:20]}-{nonce}",
            priority=len(tasks) - rank,
            pure=False,
        )
        futures[fut] = task
    for fut in as_completed(list(futures)):
        task = futures.pop(fut)
        try:
            out = fut.result()
        except Exception as e:  # noqa: BLE001 (KilledWorker, a lost connection…: not cached)
            out = {
                "ok": False,
                "error": f"txop: internal error: {type(e).__name__}: {e}".splitlines()[0],
                "transient": True,
            }
        fut.release()
        on_done(task, out)


# ---------------------------------------------------------------------------------
# From results to arrays.

_SCALARS = ("total_throughput_bps", "busy_fraction", "airtime_jain_index")
#: The run's headline delays, as ``txop compare --metric-vs`` has them: the median of
#: the measurement flows' p50s, and the highest of their p99s.
_HEADLINE_DELAYS = ("delay_p50_ms", "delay_p99_ms")
_STATION = ("throughput_bps", "uplink_bps", "downlink_bps", "airtime_share", "collisions",
            "mpdu_retries", "drops")
_FLOW = ("throughput_bps", "delivered_packets", "dropped_packets", "latency_p50_ms",
         "latency_p90_ms", "latency_p99_ms", "latency_mean_ms", "latency_max_ms",
         "rtt_p50_ms", "rtt_p90_ms", "rtt_p99_ms", "rtt_mean_ms", "rtt_max_ms",
         "delay_p50_ms", "delay_p90_ms", "delay_p99_ms", "delay_mean_ms", "delay_max_ms")
#: The flows' words in the dataset: what each is and where it runs.
_FLOW_TEXT = ("kind", "label", "name", "src", "dst")
_FLOW_TEXT_DESCRIPTIONS = {
    "kind": "what the flow is (saturated, cbr, probe, ping, udp_ping, tcp, web); empty where none",
    "label": "flent's series name, where the traffic has one",
    "name": "the label (or the kind in words) and the ends, e.g. 'probe (AP → sta1)'",
    "src": "the sending host (server, AP, sta1…); for an echo flow, the one that measures",
    "dst": "the receiving host",
}


#: The delay budget's directions, as results.json names them (the ``direction``
#: coordinate).
_DIRECTIONS = ("forward", "back")
#: The per-stage figures of the delay budget the dataset keeps.
_BUDGET = ("mean_ms", "p50_ms", "p99_ms")


@dataclass
class _Metrics:
    """What the Dataset keeps of one point's results."""

    cells: list[dict[str, Any]] = field(default_factory=list)  # per BSS (one if none)
    bss_names: list[str] = field(default_factory=list)


def _metrics(results: Mapping[str, Any], headline: Sequence[Sequence[float | None]]) -> _Metrics:
    m = _Metrics()
    cells = results.get("bss", [results])
    stations = station_rows(results)
    flows = flow_rows(results)
    budget = budget_rows(results)
    for ci, c in enumerate(cells):
        # The run's headline delays (txop's own: compare --metric-vs's figures 1 and 2).
        figures = headline[ci] if ci < len(headline) else [None] * 4
        delays = {k: math.nan if v is None else v
                  for k, v in zip(_HEADLINE_DELAYS, figures[1:3])}
        name = c.get("name")
        sts = [s for s in stations if s.get("bss") == name]
        fls = [f for f in flows if f.get("bss") == name]
        # Per flow (in fls' order) and direction: its packets and each stage's figures.
        flow_at = {f["flow"]: i for i, f in enumerate(fls)}
        budgets: list[dict[str, Any]] = [{} for _ in fls]
        for row in budget:
            if row.get("bss") != name:
                continue
            d = budgets[flow_at[row["flow"]]].setdefault(
                row["direction"], {"packets": row["packets"], "stages": {}})
            d["stages"][row["stage"]] = {k: row[k] for k in _BUDGET}
        m.cells.append(
            {
                "scalars": {k: c[k] for k in _SCALARS}
                | {"drops": sum(s["drops"] for s in sts)} | delays,
                "station_ids": [s["station"] for s in sts],
                "stations": {k: [s[k] for s in sts] for k in _STATION},
                "flow_ids": [f["flow"] for f in fls],
                "flow_text": {k: [f[k] for f in fls] for k in _FLOW_TEXT},
                "flows": {k: [f[k] for f in fls] for k in _FLOW},
                "series": [fl["throughput_series_bps"] for fl in c["flows"]],
                "budget": budgets,
                "step_s": c["series_step_s"],
            }
        )
        if name is not None:
            m.bss_names.append(name)
    return m


def _coord(values: Sequence[Any]) -> Any:
    """A grid key's values as a coordinate: numbers and booleans as they are, anything
    else (mixed types, lists) as its ``--set`` text."""
    import numpy as np

    if all(isinstance(v, bool) for v in values):
        return np.array(values, dtype=bool)
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return np.array(values)
    return np.array([toml_literal(v) for v in values], dtype=object).astype(str)


def _dataset(
    sc: Scenario,
    keys: list[str],
    values: list[list[Any]],
    seeds: list[int],
    metrics: dict[tuple[int, ...], _Metrics],
    errors: dict[tuple[int, ...], str],
    attrs: dict[str, Any],
) -> Any:
    import numpy as np
    import xarray as xr

    shape = tuple(len(v) for v in values) + (len(seeds),)
    dims = tuple(keys) + ("seed",)
    any_m = list(metrics.values())
    has_bss = any(m.bss_names for m in any_m)
    n_cells = max((len(m.cells) for m in any_m), default=1)
    n_st = max((len(c["station_ids"]) for m in any_m for c in m.cells), default=0)
    n_fl = max((len(c["flow_ids"]) for m in any_m for c in m.cells), default=0)
    n_t = max((len(s) for m in any_m for c in m.cells for s in c["series"]), default=0)
    cell_dims: tuple[str, ...] = ("bss",) if has_bss else ()
    cshape: tuple[int, ...] = (n_cells,) if has_bss else ()

    def full(extra_shape: tuple[int, ...]) -> Any:
        return np.full(shape + cshape + extra_shape, np.nan)

    scal = {k: full(()) for k in _SCALARS + ("drops",) + _HEADLINE_DELAYS}
    stat = {k: full((n_st,)) for k in _STATION}
    flow = {k: full((n_fl,)) for k in _FLOW}
    series = full((n_fl, n_t))
    station_ids = np.arange(1, n_st + 1)
    flow_ids = np.arange(n_fl)
    flow_text = {k: np.full(shape + cshape + (n_fl,), "", dtype=object) for k in _FLOW_TEXT}
    # The budget's stages, in the packet's order (every budget lists all of them).
    stages: list[str] = []
    for m in any_m:
        for c in m.cells:
            for per_flow in c["budget"]:
                for d in per_flow.values():
                    stages.extend(st for st in d["stages"] if st not in stages)
    budget = {k: full((n_fl, len(_DIRECTIONS), len(stages))) for k in _BUDGET}
    budget_packets = full((n_fl, len(_DIRECTIONS)))
    bss_names = [""] * n_cells
    step = 0.2
    for idx, m in metrics.items():
        for ci, c in enumerate(m.cells):
            at = idx + ((ci,) if has_bss else ())
            for k, v in c["scalars"].items():
                scal[k][at] = v
            for k, vs in c["stations"].items():
                stat[k][at][: len(vs)] = vs
            for k, vs in c["flows"].items():
                flow[k][at][: len(vs)] = vs
            for k, vs in c["flow_text"].items():
                flow_text[k][at][: len(vs)] = vs
            for fi, s in enumerate(c["series"]):
                series[at][fi, : len(s)] = s
            for fi, per_flow in enumerate(c["budget"]):
                for di, direction in enumerate(_DIRECTIONS):
                    d = per_flow.get(direction)
                    if d is None:
                        continue
                    budget_packets[at][fi, di] = d["packets"]
                    for si, stage in enumerate(stages):
                        for k in _BUDGET:
                            budget[k][at][fi, di, si] = d["stages"][stage][k]
            if len(c["station_ids"]) == n_st and n_st:
                station_ids = np.array(c["station_ids"])
            if len(c["flow_ids"]) == n_fl and n_fl:
                flow_ids = np.array(c["flow_ids"])
            if max((len(s) for s in c["series"]), default=0) == n_t:
                step = c["step_s"]
        if has_bss and len(m.bss_names) == n_cells:
            bss_names = list(m.bss_names)
    error = np.full(shape, "", dtype=object)
    for idx, e in errors.items():
        error[idx] = e
    base = dims + cell_dims
    data_vars: dict[str, Any] = {}
    units = {"total_throughput_bps": "bit/s", "busy_fraction": "1", "airtime_jain_index": "1",
             "drops": "packets", "delay_p50_ms": "ms", "delay_p99_ms": "ms"}
    described = {
        "delay_p50_ms": "the median of the measurement flows' (pings', probes') delay p50s, "
                        "or of every flow's if it has none",
        "delay_p99_ms": "the highest of the same flows' delay p99s",
    }
    for k, v in scal.items():
        var_attrs = {"units": units[k]}
        if k in described:
            var_attrs["description"] = described[k]
        data_vars[k] = (base, v, var_attrs)
    for k, v in stat.items():
        data_vars[f"station_{k}"] = (base + ("station",), v)
    for k, v in flow.items():
        data_vars[f"flow_{k}"] = (base + ("flow",), v)
    for k, v in flow_text.items():
        data_vars[f"flow_{k}"] = (base + ("flow",), v.astype(str),
                                  {"description": _FLOW_TEXT_DESCRIPTIONS[k]})
    for q in ("p50", "p90", "p99", "mean", "max"):
        data_vars[f"flow_delay_{q}_ms"] = (
            base + ("flow",), flow[f"delay_{q}_ms"],
            {"units": "ms", "description": "an echo flow's RTT, any other flow's one-way latency"})
    data_vars["flow_throughput_series_bps"] = (base + ("flow", "time"), series, {"units": "bit/s"})
    # The delay budget (docs/results.md, "The delay budget"): flow × direction × stage.
    data_vars["flow_budget_packets"] = (
        base + ("flow", "direction"), budget_packets,
        {"units": "packets", "description": "packets whose delay the budget splits; "
                                            "NaN where none went that way"})
    budget_described = {
        "mean_ms": "the stage's mean time per packet: a direction's stages add up "
                   "to its mean one-way delay",
        "p50_ms": "the stage's median per packet (percentiles do not add up); "
                  "NaN for TCP's ACKs, which record means only",
        "p99_ms": "the stage's 99th percentile per packet; NaN for TCP's ACKs",
    }
    for k in _BUDGET:
        data_vars[f"flow_budget_{k}"] = (
            base + ("flow", "direction", "stage"), budget[k],
            {"units": "ms", "description": budget_described[k]})
    data_vars["error"] = (dims, error.astype(str), {"description": "empty where the point ran"})
    coords: dict[str, Any] = {k: _coord(v) for k, v in zip(keys, values)}
    coords["seed"] = np.array(seeds, dtype=np.int64)
    coords["station"] = station_ids
    coords["flow"] = flow_ids
    coords["direction"] = np.array(_DIRECTIONS, dtype=object).astype(str)
    coords["stage"] = np.array(stages, dtype=object).astype(str)
    coords["time"] = ("time", np.arange(n_t) * step, {"units": "s", "description": "start of each step"})
    if has_bss:
        coords["bss"] = np.array(bss_names, dtype=object).astype(str)
    return xr.Dataset(data_vars, coords=coords, attrs=attrs)


# ---------------------------------------------------------------------------------


def sweep(
    scenario: str | os.PathLike[str] | Scenario,
    grid: Mapping[str, Iterable[Any]] | None = None,
    seeds: int | str | Iterable[int] = 1,
    *,
    client: Any = None,
    workers: int | None = None,
    cache: str | os.PathLike[str] | None = None,
    progress: bool = True,
    results_dirs: str | os.PathLike[str] | None = None,
    **overrides: Any,
) -> Any:
    """Run ``scenario`` at every point of ``grid``'s product, once per seed, and
    return the results as an ``xarray.Dataset``.

    Args:
        scenario: a :class:`txop.Scenario`, a built-in name or a scenario file.
        grid: scenario key -> values (``{"stations.count": [1, 4, 16], "stack":
            ["linux-4.9", "linux-6.16"]}``); the keys of ``--set``.
        seeds: a count n (seeds 1..n), ``"1-10"``, or a list.
        client: a ``dask.distributed.Client`` (a ``LocalCluster``'s, a
            ``dask-jobqueue`` cluster's) or a scheduler address; ``None`` runs on a
            local pool of ``workers`` processes (default: the machine's cores).
        cache: a directory for the results cache: a re-run computes only what is not
            in it, and an interrupted sweep resumes.
        progress: a tqdm bar on stderr (points done, failed, ETA).
        results_dirs: a directory to write each point's results directory into
            (``txop run -o``), named after the point.
        overrides: keyword overrides of the base scenario, as :func:`txop.scenario`.

    Returns:
        An ``xarray.Dataset`` with a dimension per grid key and ``seed`` (and
        ``bss``, ``station``, ``flow``, ``time`` where a variable has them):
        ``total_throughput_bps``, ``busy_fraction``, ``airtime_jain_index``,
        ``drops``, ``delay_p50_ms`` and ``delay_p99_ms`` (the run's headline delays:
        the median of its measurement flows' p50s, the highest of their p99s),
        ``station_*`` (throughput, airtime share, collisions, retries,
        drops), ``flow_*`` (kind, label, throughput, packets, latency and RTT percentiles
        in ms; flow k of one point need not be flow k of another),
        ``flow_throughput_series_bps``, and ``error`` (the message of a failed
        point, empty where it ran). NaN where a point failed or has fewer stations
        or flows. Attributes: ``txop_version``, ``scenario`` (the base scenario, fully
        resolved), ``scenario_name``, ``grid``, ``seeds``, ``points_failed``.

    Raises:
        txop.TxopError: before any point runs, for an unknown scenario, or a grid key
            or value the base scenario does not take (the message names it).
    """
    if _importing_main_in_a_worker():
        # A worker of a local pool importing a script without the main guard: end it
        # here, quietly; the sweep that started it says why (NO_MAIN_GUARD).
        os._exit(_NO_MAIN_GUARD_EXIT)
    sc = _as_scenario(scenario, {_key(k): v for k, v in overrides.items()})
    seed_list = parse_seeds(seeds)
    workers = check_workers(workers)
    cache_dir = _path("cache", cache) if cache is not None else None
    dirs = _path("results_dirs", results_dirs) if results_dirs is not None else None
    if client is not None and not isinstance(client, str) and not hasattr(client, "submit"):
        raise _txop.TxopError(
            f"client: expected a dask.distributed Client or a scheduler address, not {client!r}"
        )
    if grid is not None and not isinstance(grid, Mapping):
        raise _txop.TxopError(f"grid: expected a dict of key -> values, not {grid!r}")
    keys = list((grid or {}).keys())
    values: list[list[Any]] = []
    runs = len(seed_list)
    for k in keys:
        if not isinstance(k, str):
            raise _txop.TxopError(f"grid {k!r}: a scenario key is a string such as \"stations.count\"")
        if k == "seed":
            raise _txop.TxopError("grid seed: the seed is not a grid key; give the seeds as "
                                  "seeds= (txop sweep --seeds)")
        vs = values_of(f"grid {k}", grid[k])  # type: ignore[index]
        if not vs:
            raise _txop.TxopError(f"grid {k}: no values")
        runs *= len(vs)
        values.append(vs)
    _check_runs("grid " + " x ".join([f"{k} ({len(v)} values)" for k, v in zip(keys, values)]
                                     + [f"{len(seed_list)} seeds"]), runs)
    base_sets = sc.sets()
    # Every key and value alone on the base scenario: an unknown one stops the sweep.
    for k, vs in zip(keys, values):
        for v in vs:
            text = set_text(k, v, f"grid {k}")[1]
            try:
                _txop.resolve(sc.spec, [*base_sets, (k, text)])
            except _txop.TxopError as e:
                raise _txop.TxopError(f"grid {k}={text}: {e}") from None
    tasks: list[_Task] = []
    errors: dict[tuple[int, ...], str] = {}
    metrics: dict[tuple[int, ...], _Metrics] = {}
    labels: dict[tuple[int, ...], str] = {}
    for gidx in itertools.product(*(range(len(v)) for v in values)):
        point = {k: values[i][j] for i, (k, j) in enumerate(zip(keys, gidx))}
        sets = base_sets + [(k, toml_literal(v)) for k, v in point.items()]
        try:
            name, _, text, cost, _ = _txop.resolve(sc.spec, sets)
        except _txop.TxopError as e:
            for si, _seed in enumerate(seed_list):
                errors[gidx + (si,)] = str(e)
            continue
        for si, seed in enumerate(seed_list):
            idx = gidx + (si,)
            labels[idx] = point_label(point, seed)
            tasks.append(_Task(_cache_key(name, text, seed), idx, point, seed, sets, cost))
    tasks.sort(key=lambda t: -t.cost)  # stable: grid order among equals
    # Each point's results directory: one a user has put a file in stops the sweep
    # here, before anything runs or is written; one of an earlier sweep of other
    # settings (another --set, another build) is written again.
    fresh_dirs: set[str] = set()
    if dirs is not None:
        for t in tasks:
            d = _point_dir(dirs, labels[t.index])
            if _txop.results_dir_exists(d) and _point_stamp(d) == t.key:
                fresh_dirs.add(d)
    total = len(tasks) + len(errors)
    owned_client = None
    if client is not None and isinstance(client, str):
        owned_client = client = connect(client)
    try:
        cache_ = _Cache(cache_dir)
        todo: list[_Task] = []
        for t in tasks:
            entry = cache_.load(t.key)
            want_dir = dirs is not None and _point_dir(dirs, labels[t.index]) not in fresh_dirs
            if entry is not None and not (want_dir and entry.get("ok")):
                _take(entry, t.index, metrics, errors)
                continue
            t.want_files = want_dir
            todo.append(t)
        ds = _sweep_tasks(sc, keys, values, seed_list, tasks, todo, total, cache_, dirs,
                          labels, metrics, errors, client, workers, progress)
    finally:
        if owned_client is not None:
            owned_client.close()
    if dirs is not None:
        _remove_stale_dirs(dirs, {_point_dir(dirs, labels[t.index]) for t in tasks
                                  if t.index in metrics})
    return ds


def _sweep_tasks(
    sc: Scenario,
    keys: list[str],
    values: list[list[Any]],
    seed_list: list[int],
    tasks: list[_Task],
    todo: list[_Task],
    total: int,
    cache_: _Cache,
    dirs: str | None,
    labels: dict[tuple[int, ...], str],
    metrics: dict[tuple[int, ...], _Metrics],
    errors: dict[tuple[int, ...], str],
    client: Any,
    workers: int | None,
    progress: bool,
) -> Any:
    """Run ``todo`` (the tasks not in the cache), file every result, and build the
    dataset of all ``tasks``."""
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=total, initial=total - len(todo), desc="txop sweep", unit="run",
                   file=sys.stderr, dynamic_ncols=True)
        bar.set_postfix(failed=len(errors))
    spec = sc.spec

    def on_done(task: _Task, out: dict[str, Any]) -> None:
        entry = {
            "format": CACHE_FORMAT,
            "key": task.key,
            "txop_version": _txop.__version__,
            "txop_build": build_id(),
            "spec": spec,
            "sets": task.sets,
            "seed": task.seed,
            "ok": out["ok"],
            "elapsed_s": out.get("elapsed_s"),
        }
        if out["ok"]:
            entry["json"] = out["json"]
            entry["headline"] = out["headline"]
        else:
            entry["error"] = out["error"]
        if not out.get("transient"):
            cache_.store(entry)
        if out.get("files") is not None and dirs is not None:
            stamp = json.dumps({"key": task.key, "point": {k: toml_literal(v) for k, v in task.point.items()},
                                "seed": task.seed}, indent=1) + "\n"
            _txop.write_files(_point_dir(dirs, labels[task.index]),
                              [*out["files"], (POINT_STAMP, stamp.encode())], True)
        _take(entry, task.index, metrics, errors)
        if bar is not None:
            bar.update(1)
            bar.set_postfix(failed=len(errors))

    try:
        if todo:
            if client is None:
                _run_local(spec, todo, workers or os.cpu_count() or 1, on_done)
            else:
                _run_dask(spec, todo, client, on_done)
    finally:
        if bar is not None:
            bar.close()
    attrs = {
        "txop_version": _txop.__version__,
        "txop_build": build_id(),
        "scenario_name": sc.name,
        "scenario_spec": sc.spec,
        "scenario": sc.text,
        "grid": json.dumps({k: [toml_literal(v) for v in vs] for k, vs in zip(keys, values)}),
        "seeds": json.dumps(seed_list),
        "points_failed": len(errors),
    }
    return _dataset(sc, keys, values, seed_list, metrics, errors, attrs)


#: The file in each point's results directory naming the point and its cache key:
#: what tells a re-run whether the directory holds this point's results.
POINT_STAMP = "sweep-point.json"


def _point_stamp(d: str) -> str | None:
    """The cache key in ``d``'s :data:`POINT_STAMP`, if it has a readable one."""
    try:
        with open(os.path.join(d, POINT_STAMP), encoding="utf-8") as f:
            key = json.load(f).get("key")
    except (OSError, ValueError, AttributeError):
        return None
    return key if isinstance(key, str) else None


def _remove_stale_dirs(root: str, keep: set[str]) -> None:
    """Remove the results directories txop wrote under ``root`` that are not points
    of this sweep's results (an earlier sweep's, a point that failed this time);
    anything else there (a user's file or folder) is left as it is."""
    import shutil

    try:
        names = os.listdir(root)
    except OSError:
        return
    for name in names:
        d = os.path.join(root, name)
        if name.startswith(".") or d in keep:
            continue
        try:
            ours = _txop.results_dir_exists(d)
        except _txop.TxopError:
            continue  # not txop's: left alone
        if ours:
            shutil.rmtree(d)


def _point_dir(root: str, label: str) -> str:
    return os.path.join(root, _slug(label.replace(", seed ", ",seed=").replace(", ", ",")))


def _take(
    entry: Mapping[str, Any],
    idx: tuple[int, ...],
    metrics: dict[tuple[int, ...], _Metrics],
    errors: dict[tuple[int, ...], str],
) -> None:
    if entry.get("ok"):
        metrics[idx] = _metrics(json.loads(entry["json"]), entry.get("headline") or [])
    else:
        errors[idx] = entry.get("error") or "failed"


class MetricChart:
    """A ``--metric-vs`` chart (:func:`metric_vs`): :attr:`table` is the text ``txop
    sweep --metric-vs`` prints, :attr:`results` the chart as ``txop compare
    --metric-vs`` has it in results.json, :attr:`points` a DataFrame of it."""

    def __init__(self, native: Any):
        self._native = native
        self.table: str = native.table()
        self.results: dict[str, Any] = json.loads(native.json())

    @property
    def points(self) -> pd.DataFrame:
        """One row per metric, line and value of the key (index ``metric, line, x``):
        ``unit``, ``median`` over the seeds, ``min``, ``max``, ``runs``."""
        return chart_points(self.results)

    def write(self, dir: str | os.PathLike[str]) -> list[str]:
        """Write the chart's files (``metric-vs-KEY.txt``, ``.png``, ``.svg``) into
        ``dir`` (made if missing; files of those names are replaced); returns their
        paths."""
        d = os.fspath(dir)
        os.makedirs(d, exist_ok=True)
        written = []
        for name, data in self._native.files():
            path = os.path.join(d, name)
            tmp = path + ".tmp"
            with open(tmp, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
            written.append(path)
        return written


def metric_vs(ds: Any, key: str) -> MetricChart:
    """The headline figures of a sweep (:func:`sweep`'s Dataset) against its grid key
    ``key`` (numeric values): a line per setting of the other grid keys (and per BSS),
    each point the median over the seeds with their range, as ``txop compare
    --metric-vs`` charts a comparison. Points that failed are left out."""
    scenario = str(ds.attrs.get("scenario_name", ""))
    keys = [k for k in ds["error"].dims if k != "seed"]
    if key not in keys:
        # No runs: the native check refuses as `txop compare --metric-vs` does (the
        # seed, or a key the sweep does not vary).
        _txop.metric_vs(scenario, key, [])
    has_bss = "bss" in ds["total_throughput_bps"].dims
    names = [str(b) for b in ds["bss"].values] if has_bss else [None]

    def figure(v: Any) -> float | None:
        x = float(v)
        return None if math.isnan(x) else x

    runs = []
    for idx in itertools.product(*(range(ds.sizes[k]) for k in keys)):
        at = dict(zip(keys, idx))
        for si, seed in enumerate(ds["seed"].values):
            if str(ds["error"].isel(dict(at, seed=si)).item()):
                continue
            sets = [(k, toml_literal(ds[k].values[i].item())) for k, i in at.items()]
            sets.append(("seed", str(int(seed))))
            for bi, name in enumerate(names):
                cell = dict(at, seed=si) | ({"bss": bi} if has_bss else {})
                runs.append((sets, name, [
                    # The dataset keeps bit/s; the chart's figure is Mbit/s.
                    figure(ds["total_throughput_bps"].isel(cell) / 1e6),
                    figure(ds["delay_p50_ms"].isel(cell)),
                    figure(ds["delay_p99_ms"].isel(cell)),
                    figure(ds["airtime_jain_index"].isel(cell)),
                ]))
    if not runs:
        raise _txop.TxopError(f"metric_vs {key}: every point of the sweep failed; nothing to chart")
    return MetricChart(_txop.metric_vs(scenario, key, runs))
