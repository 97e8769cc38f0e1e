"""Scenarios, runs and comparisons: the ``txop`` command's ``show``, ``run``,
``compare``, ``stacks`` and ``list`` as Python calls (``txop.scenario``, ``txop.run``…).

Everything here calls the native module ``txop._txop``, which calls the functions
the command line calls: the same scenario keys, the same errors, the same numbers.
pandas is imported only when a DataFrame is asked for.
"""

from __future__ import annotations

import builtins
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from . import _txop

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = [
    "Against",
    "Comparison",
    "Result",
    "Scenario",
    "compare",
    "list_",
    "run",
    "scenario",
    "stacks",
    "toml_literal",
]


def toml_literal(value: Any) -> str:
    """``value`` as the text ``--set KEY=TEXT`` takes: a TOML literal (``true``,
    ``4``, ``0.5``, ``[1, 2]``, ``{ a = 1 }``), or a string as it is (``--set`` reads
    what is not a TOML literal as a string).

    Raises :class:`txop.TxopError` for a value no scenario key takes (``None``, an
    object, a set…); the callers prepend the key."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return value
    return _toml_value(value)


def _toml_value(value: Any) -> str:
    """``value`` as a TOML value inside an array or inline table (strings quoted).

    Only the types TOML has reach here; anything else raises instead of being handed
    back to :func:`toml_literal` (which would hand it back here, for ever)."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (bool, int, float)):
        return toml_literal(value)
    if isinstance(value, Mapping):
        inner = ", ".join(f"{json.dumps(str(k))} = {_toml_value(v)}" for k, v in value.items())
        return "{ " + inner + " }" if inner else "{}"
    if isinstance(value, (builtins.list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    item = getattr(value, "item", None)
    if callable(item) and getattr(value, "shape", None) == ():  # a numpy scalar
        inner_value = item()
        if isinstance(inner_value, (bool, int, float, str)):
            return _toml_value(inner_value)
    raise _txop.TxopError(
        f"{value!r} is not a scenario value: expected a bool, a number, a string, "
        "a list or a dict"
    )


def set_text(key: Any, value: Any, where: str = "") -> tuple[str, str]:
    """An override as the ``--set`` pair ``(key, text)``, or :class:`txop.TxopError`
    naming the key (after ``where``, the scenario) for a key that is not a string or a
    value no key takes."""
    prefix = f"{where}: " if where else ""
    if not isinstance(key, str):
        raise _txop.TxopError(
            f"{prefix}{key!r}: a scenario key is a string such as \"stations.count\""
        )
    try:
        return key, toml_literal(value)
    except _txop.TxopError as e:
        raise _txop.TxopError(f"{prefix}{key}: {e}") from None


def check_seed(seed: Any, what: str = "seed") -> int | None:
    """``seed`` if it is ``None`` or a whole number a seed can be (0 to 2^64 - 1);
    else :class:`txop.TxopError` naming ``what``."""
    if seed is None:
        return None
    if isinstance(seed, bool) or not _is_int(seed) or not 0 <= int(seed) < 2**64:
        raise _txop.TxopError(
            f"{what}: expected a whole number from 0 to {2**64 - 1}, not {seed!r}"
        )
    return int(seed)


def check_workers(workers: Any) -> int | None:
    """``workers`` if it is ``None`` or a whole number of at least 1 (as ``txop sweep
    --workers`` and ``txop compare --workers`` take it); else :class:`txop.TxopError`."""
    if workers is None:
        return None
    if isinstance(workers, bool) or not _is_int(workers) or int(workers) < 1:
        raise _txop.TxopError(f"workers: expected a whole number of at least 1, not {workers!r}")
    return int(workers)


def _is_int(value: Any) -> bool:
    """Whether ``value`` is a whole number (an ``int``, a numpy integer), not a float."""
    import operator

    try:
        operator.index(value)
    except TypeError:
        return False
    return True


def values_of(what: str, values: Any) -> builtins.list[Any]:
    """A grid or ``vary`` axis's values as a list: a list, tuple, range or other
    iterable; a string, or anything not iterable, raises :class:`txop.TxopError`
    naming ``what`` (a string would otherwise be taken letter by letter)."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise _txop.TxopError(f"{what}: expected a list of values, not {values!r}")
    return builtins.list(values)


def _path(what: str, value: Any) -> str:
    """A path argument as text, or :class:`txop.TxopError` naming ``what``."""
    if not isinstance(value, (str, os.PathLike)):
        raise _txop.TxopError(f"{what}: expected a path, not {value!r}")
    return os.fspath(value)


def _key(name: str) -> str:
    """A keyword argument's name as a scenario key: ``stations__count`` is
    ``stations.count``."""
    return name.replace("__", ".")


def _spec(name_or_path: str | os.PathLike[str]) -> str:
    """A built-in name as it is; a path made absolute, so that the scenario means the
    same file from any directory (and in a sweep's worker processes)."""
    spec = _path("scenario", name_or_path)
    if spec in {name for name, _ in _txop.scenarios()}:
        return spec
    if os.path.exists(spec):
        return os.path.abspath(spec)
    return spec


class Scenario:
    """A scenario (a built-in name or a TOML file) with overrides, validated: every
    change is checked as ``txop run --set`` checks it, and a bad key or value raises
    :class:`txop.TxopError` naming it.

    Make one with :func:`txop.scenario`. ``sc["stations.count"] = 4`` changes it in
    place; :meth:`set` returns a changed copy. :attr:`text` is the scenario fully
    resolved, as ``txop show`` prints it.
    """

    def __init__(self, spec: str, overrides: Mapping[str, Any] | None = None):
        self.spec: str = spec
        #: The overrides, in order: scenario key -> value.
        self.overrides: dict[str, Any] = dict(overrides or {})
        self._check()

    def _check(self) -> None:
        name, seed, text, cost, has_bss = _txop.resolve(self.spec, self.sets())
        self.name: str = name
        #: The scenario's seed (``txop.run(..., seed=N)`` overrides it).
        self.seed: int = seed
        #: Every key with its default filled in (TOML), as ``txop show`` prints it.
        self.text: str = text
        #: A rough cost (nodes x simulated seconds): sweeps start the costliest first.
        self.cost: float = cost
        #: Whether it lists several BSSs (``[[bss]]``).
        self.has_bss: bool = has_bss

    def sets(self) -> builtins.list[tuple[str, str]]:
        """The overrides as ``--set`` pairs ``(key, text)``."""
        return [set_text(k, v, self.spec) for k, v in self.overrides.items()]

    def set(self, overrides: Mapping[str, Any] | None = None, **kwargs: Any) -> Scenario:
        """A copy with more overrides (``stations__count=4`` is ``stations.count``),
        validated."""
        merged = dict(self.overrides)
        merged.update(overrides or {})
        merged.update({_key(k): v for k, v in kwargs.items()})
        return Scenario(self.spec, merged)

    def __setitem__(self, key: str, value: Any) -> None:
        before = dict(self.overrides)
        self.overrides[key] = value
        try:
            self._check()
        except Exception:
            self.overrides = before
            raise

    def __getitem__(self, key: str) -> Any:
        """A key's resolved value (``sc["stack"]``, ``sc["traffic.length_s"]``)."""
        node: Any = self.to_dict()
        for part in key.split("."):
            if "[" in part:
                name, index = part.rstrip("]").split("[")
                node = node[name][int(index)]
            else:
                node = node[part]
        return node

    def to_dict(self) -> dict[str, Any]:
        """The resolved scenario as a dict (parsed from :attr:`text`)."""
        try:
            import tomllib
        except ImportError:  # Python < 3.11
            import tomli as tomllib  # type: ignore[no-redef, import-not-found]
        return tomllib.loads(self.text)

    def __repr__(self) -> str:
        return f"txop.scenario({self.spec!r}, {self.overrides!r})"


def scenario(
    name_or_path: str | os.PathLike[str] | Scenario,
    overrides: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> Scenario:
    """A built-in scenario (``txop.list()["scenarios"]``) or a scenario file, with
    overrides, validated.

    Overrides take the keys of ``--set`` (docs/scenarios.md): as a dict
    (``{"stations.list[0].count": 1}``) or as keyword arguments, with ``__`` for the
    dots (``stations__count=4``, ``stack="linux-4.9"``). Values are Python values
    (``True``, ``4``, ``0.5``, ``"fq_codel"``, lists) or ``--set`` text.

    Raises :class:`txop.TxopError` (a ``ValueError``) for an unknown scenario, key or
    value, with the message ``txop`` prints.
    """
    merged: dict[str, Any] = {}
    if isinstance(name_or_path, Scenario):
        merged.update(name_or_path.overrides)
        spec = name_or_path.spec
    else:
        spec = _spec(name_or_path)
    merged.update(overrides or {})
    merged.update({_key(k): v for k, v in kwargs.items()})
    return Scenario(spec, merged)


def _cells(results: Mapping[str, Any]) -> builtins.list[tuple[str | None, Mapping[str, Any]]]:
    """The cells of a results dict: ``[(None, results)]`` for one cell, ``[(name,
    bss), …]`` for several BSSs."""
    if "bss" in results:
        return [(b["name"], b) for b in results["bss"]]
    return [(None, results)]


_LATENCIES = ("latency_ms", "driver_latency_ms", "rtt_ms", "tcp_rtt_ms")
_QUANTILES = ("min", "mean", "p50", "p90", "p99", "max")


def station_rows(results: Mapping[str, Any]) -> builtins.list[dict[str, Any]]:
    """One dict per station (per BSS): its scalar results, plus ``drops`` (queue
    full + retry limit + AQM)."""
    rows = []
    for bss, cell in _cells(results):
        for st in cell["stations"]:
            row: dict[str, Any] = {} if bss is None else {"bss": bss}
            row.update({k: v for k, v in st.items() if not isinstance(v, (dict, builtins.list))})
            row["drops"] = st["dropped_queue_full"] + st["dropped_retry_limit"] + st["dropped_aqm"]
            rows.append(row)
    return rows


#: Flows whose delay is a round trip (docs/results.md, "Flow kinds").
_ECHO_KINDS = ("ping", "udp_ping")


def flow_rows(results: Mapping[str, Any]) -> builtins.list[dict[str, Any]]:
    """One dict per flow (per BSS): its scalar results (``kind``, ``name``, ``src``,
    ``dst``…), with the latency summaries flattened (``latency_p50_ms``,
    ``rtt_p99_ms``, ``driver_latency_max_ms``; NaN where the flow has none) and
    ``delay_*_ms``, the delay a reader compares: an echo flow's RTT, any other flow's
    one-way latency."""
    rows = []
    for bss, cell in _cells(results):
        for f in cell["flows"]:
            row: dict[str, Any] = {} if bss is None else {"bss": bss}
            row.update(
                {
                    k: (math.nan if v is None else v)
                    for k, v in f.items()
                    if k not in _LATENCIES and not isinstance(v, (dict, builtins.list))
                }
            )
            for m in _LATENCIES:
                summary = f.get(m) or {}
                for q in _QUANTILES:
                    row[f"{m[:-3]}_{q}_ms"] = summary.get(q, math.nan)
            delay = "rtt" if f["kind"] in _ECHO_KINDS else "latency"
            for q in _QUANTILES:
                row[f"delay_{q}_ms"] = row[f"{delay}_{q}_ms"]
            rows.append(row)
    return rows


#: A TCP flow's series (results.json key, column of :attr:`Result.tcp`).
_TCP_SERIES = (
    ("cwnd_series_bytes", "cwnd_bytes"),
    ("srtt_series_ms", "srtt_ms"),
    ("pacing_rate_series_bps", "pacing_rate_bps"),
    ("delivery_rate_series_bps", "delivery_rate_bps"),
)


def tcp_rows(results: Mapping[str, Any]) -> builtins.list[dict[str, Any]]:
    """One dict per TCP flow and step (per BSS): the flow, ``time_s`` (the end of the
    step), its series' values there (NaN where a series has none) and ``bbr_modes``."""
    rows = []
    for bss, cell in _cells(results):
        step = cell["series_step_s"]
        for f in cell["flows"]:
            steps = len(f.get("cwnd_series_bytes", []))
            for k in range(steps):
                row: dict[str, Any] = {} if bss is None else {"bss": bss}
                row["flow"] = f["flow"]
                row["time_s"] = (k + 1) * step
                for key, column in _TCP_SERIES:
                    values = f.get(key, [])
                    value = values[k] if k < len(values) else None
                    row[column] = math.nan if value is None else value
                modes = f.get("bbr_mode_series", [])
                row["bbr_modes"] = "+".join(modes[k]) if k < len(modes) else ""
                rows.append(row)
    return rows


def budget_rows(results: Mapping[str, Any]) -> builtins.list[dict[str, Any]]:
    """One dict per flow, direction and stage of the delay budget (per BSS): the
    flow, ``direction`` (``forward``, ``back``), ``stage`` and its ``packets``,
    ``sum_ns``, ``mean_ms``, ``p50_ms`` and ``p99_ms`` (NaN for TCP's ACKs, which
    record means only). A direction no packet took has no rows."""
    rows = []
    for bss, cell in _cells(results):
        for f in cell["flows"]:
            for direction in ("forward", "back"):
                b = f["delay_budget"][direction]
                if b is None:
                    continue
                for s in b["stages"]:
                    row: dict[str, Any] = {} if bss is None else {"bss": bss}
                    row.update({"flow": f["flow"], "direction": direction, "stage": s["stage"]})
                    row["packets"] = b["packets"]
                    for k in ("sum_ns", "mean_ms", "p50_ms", "p99_ms"):
                        row[k] = math.nan if s[k] is None else s[k]
                    rows.append(row)
    return rows


class Result:
    """One run's results.

    :attr:`results` is the dict ``txop run --json`` prints; :attr:`flows`,
    :attr:`stations`, :attr:`bss` and :attr:`series` are pandas views of it;
    :meth:`write` writes the results directory ``txop run -o DIR`` writes.
    """

    def __init__(self, native: Any, scenario: Scenario, seed: int | None):
        self._native = native
        #: The scenario that was run.
        self.scenario: Scenario = scenario
        #: What ``txop run --json`` prints (text).
        self.json: str = native.json()
        #: The results as a dict (``txop run --json``; docs/results.md).
        self.results: dict[str, Any] = json.loads(self.json)
        #: The run's seed.
        self.seed: int = self.results.get("seed", seed)

    @property
    def summary(self) -> str:
        """The table ``txop run`` prints."""
        return self._native.summary()

    def __repr__(self) -> str:
        return f"<txop.Result {self.results.get('scenario')!r} seed {self.seed}>\n" + self.summary

    @property
    def stations(self) -> pd.DataFrame:
        """One row per station (index ``station``, or ``bss, station``): throughput
        (bit/s, up and down), airtime share, collisions, retries, ``drops``…"""
        import pandas as pd

        keys = ["bss", "station"] if "bss" in self.results else ["station"]
        return pd.DataFrame(station_rows(self.results)).set_index(keys)

    @property
    def flows(self) -> pd.DataFrame:
        """One row per flow (index ``flow``, or ``bss, flow``): kind, label, ends,
        packets offered/delivered/dropped, throughput (bit/s), latency percentiles
        (``latency_p50_ms``, ``rtt_p99_ms``…, NaN where the flow has none)."""
        import pandas as pd

        keys = ["bss", "flow"] if "bss" in self.results else ["flow"]
        return pd.DataFrame(flow_rows(self.results)).set_index(keys)

    @property
    def bss(self) -> pd.DataFrame | None:
        """One row per BSS (index ``bss``) for a scenario with ``[[bss]]``: channel,
        total throughput, medium busy fraction, Jain's index; ``None`` otherwise."""
        import pandas as pd

        if "bss" not in self.results:
            return None
        rows = [
            {
                "bss": b["name"],
                "channel": b["channel"],
                "stations": len(b["stations"]),
                "total_throughput_bps": b["total_throughput_bps"],
                "busy_fraction": b["busy_fraction"],
                "airtime_jain_index": b["airtime_jain_index"],
            }
            for b in self.results["bss"]
        ]
        return pd.DataFrame(rows).set_index("bss")

    @property
    def series(self) -> pd.DataFrame:
        """Each flow's throughput (bit/s) per step of ``series_step_s`` (0.2 s, more
        for long runs), indexed by ``time_s``, the start of the step; one column per
        flow (``(bss, flow)`` with several BSSs)."""
        import pandas as pd

        columns = {}
        step = None
        for bss, cell in _cells(self.results):
            step = cell["series_step_s"]
            for f in cell["flows"]:
                col = f["flow"] if bss is None else (bss, f["flow"])
                columns[col] = pd.Series(f["throughput_series_bps"], dtype="float64")
        frame = pd.DataFrame(columns)
        frame.index = pd.Index([i * (step or 0.2) for i in range(len(frame))], name="time_s")
        frame.columns.name = "flow"
        return frame

    @property
    def tcp(self) -> pd.DataFrame:
        """Each TCP sender over time (docs/results.md): a row per TCP flow and step of
        ``series_step_s``, indexed by ``flow`` (``bss, flow`` with several BSSs) and
        ``time_s``, the end of the step, where its values were taken: ``cwnd_bytes``,
        ``srtt_ms``, ``pacing_rate_bps``, ``delivery_rate_bps`` (NaN before the first
        sample or when the sender does not pace) and ``bbr_modes`` (the modes of the
        step joined by ``+``, ``"STARTUP+DRAIN"``; empty for other congestion
        controls). ``r.tcp["cwnd_bytes"].unstack("flow").plot()`` draws
        ``tcp-cwnd.png``."""
        import pandas as pd

        keys = (["bss"] if "bss" in self.results else []) + ["flow", "time_s"]
        columns = keys + [c for _, c in _TCP_SERIES] + ["bbr_modes"]
        return pd.DataFrame(tcp_rows(self.results), columns=columns).set_index(keys)

    @property
    def budget(self) -> pd.DataFrame:
        """Where each flow's delay goes (docs/results.md, "The delay budget"): a row per
        flow, direction and stage, indexed by ``flow`` (``bss, flow`` with several
        BSSs), ``direction`` and ``stage`` in the packet's order, with ``packets``,
        ``sum_ns``, ``mean_ms`` (the means of a direction add up to its mean delay),
        ``p50_ms`` and ``p99_ms``. ``r.budget["mean_ms"].xs("forward",
        level="direction").unstack("stage").plot.barh(stacked=True)`` draws where the
        time goes."""
        import pandas as pd

        keys = (["bss"] if "bss" in self.results else []) + ["flow", "direction", "stage"]
        columns = keys + ["packets", "sum_ns", "mean_ms", "p50_ms", "p99_ms"]
        return pd.DataFrame(budget_rows(self.results), columns=columns).set_index(keys)

    def write(self, dir: str | os.PathLike[str], force: bool = False) -> None:
        """Write the results directory ``txop run -o DIR`` writes (summary.txt,
        results.json, plots, flent files); refused if ``dir`` exists, unless ``force``
        and txop wrote it."""
        self._native.write(os.fspath(dir), force)


def _as_scenario(sc: str | os.PathLike[str] | Scenario, overrides: Mapping[str, Any]) -> Scenario:
    if isinstance(sc, Scenario) and not overrides:
        return sc
    return scenario(sc, overrides)


def run(
    scenario: str | os.PathLike[str] | Scenario,
    seed: int | None = None,
    **overrides: Any,
) -> Result:
    """Run a scenario (a :class:`Scenario`, a built-in name or a file) as ``txop run``
    does, and return its :class:`Result`. ``seed`` overrides the scenario's; keyword
    overrides as in :func:`txop.scenario` (``stations__count=4``).

    The simulation runs without the GIL: other Python threads go on meanwhile.
    Raises :class:`txop.TxopError` for a bad scenario, key or value.
    """
    sc = _as_scenario(scenario, {_key(k): v for k, v in overrides.items()})
    native = _txop.run(sc.spec, sc.sets(), check_seed(seed))
    return Result(native, sc, seed)


class _Table:
    """What a comparison gives: :attr:`summary` is the table the command prints,
    :attr:`results` its ``--json``; :meth:`write` writes its results directory."""

    def __init__(self, native: Any):
        self._native = native
        self.json: str = native.json()
        self.results: dict[str, Any] = json.loads(self.json)

    @property
    def summary(self) -> str:
        """The table the command prints."""
        return self._native.summary()

    def __repr__(self) -> str:
        return self.summary

    def write(self, dir: str | os.PathLike[str], force: bool = False) -> None:
        """Write the results directory the command's ``-o DIR`` writes."""
        self._native.write(os.fspath(dir), force)


class Comparison(_Table):
    """A comparison's results: :attr:`summary` is the table ``txop compare`` prints,
    :attr:`results` its ``--json``, :attr:`runs` one row per setting."""

    @property
    def runs(self) -> pd.DataFrame:
        """One row per setting (index ``label``; ``label, bss`` for a scenario with
        ``[[bss]]``, a row per setting and BSS): the settings, total throughput,
        medium busy fraction, Jain's index over airtime."""
        import pandas as pd

        rows = []
        several = False
        for r in self.results["runs"]:
            for bss, cell in _cells(r):
                row: dict[str, Any] = {"label": r["label"]}
                if bss is not None:
                    several = True
                    row["bss"] = bss
                row.update(r["settings"])
                for k in ("total_throughput_bps", "busy_fraction", "airtime_jain_index"):
                    row[k] = cell[k]
                rows.append(row)
        return pd.DataFrame(rows).set_index(["label", "bss"] if several else "label")

    @property
    def metric_vs(self) -> pd.DataFrame | None:
        """With ``compare(metric_vs=KEY)``: the chart's points, one row per metric,
        line and value of the key (index ``metric, line, x``): ``unit``, the
        ``median`` over the seeds, ``min``, ``max`` and ``runs``. ``None`` without
        ``metric_vs``."""
        chart = self.results.get("metric_vs")
        return None if chart is None else chart_points(chart)


def chart_points(chart: Mapping[str, Any]) -> pd.DataFrame:
    """A ``metric_vs`` chart (docs/results.md) as a DataFrame: one row per metric, line
    and value of the key (index ``metric, line, x``): ``unit``, ``median``, ``min``,
    ``max``, ``runs``."""
    import pandas as pd

    rows = [
        {"metric": m["metric"], "line": line["label"], "x": p["x"], "unit": m["unit"],
         "median": p["median"], "min": p["min"], "max": p["max"], "runs": p["runs"]}
        for m in chart["metrics"]
        for line in m["lines"]
        for p in line["points"]
    ]
    columns = ["metric", "line", "x", "unit", "median", "min", "max", "runs"]
    return pd.DataFrame(rows, columns=columns).set_index(["metric", "line", "x"])


class Against(_Table):
    """A run held against a real flent file (``txop compare --against FILE``):
    :attr:`summary` is the table it prints, :attr:`results` its ``--json`` (the file,
    the mapping, the rows and txop's results), :attr:`rows` the table as a DataFrame."""

    @property
    def mapping(self) -> dict[str, Any]:
        """How the file was mapped: txop's ``test``, ``cc``, ``ecn``, ``flent_on``,
        the ``series`` paired (``{"real": …, "txop": …}``) and ``notes``."""
        return self.results["mapping"]

    @property
    def rows(self) -> pd.DataFrame:
        """One row per series (index ``series``, txop's name): ``units``,
        ``real_p50``, ``txop_p50``, ``p50_ratio`` (txop / real) and the same for p90,
        each over its run's loaded period; NaN where a side has no value."""
        import pandas as pd

        rows = []
        for r in self.results["rows"]:
            row: dict[str, Any] = {"series": r["series"], "units": r["units"]}
            for q in ("p50", "p90"):
                real = (r.get("real") or {}).get(q, math.nan)
                sim = (r.get("txop") or {}).get(q, math.nan)
                row[f"real_{q}"] = real
                row[f"txop_{q}"] = sim
                row[f"{q}_ratio"] = sim / real if real else math.nan
            rows.append(row)
        return pd.DataFrame(rows).set_index("series")


def compare(
    scenario: str | os.PathLike[str] | Scenario | None = None,
    stacks: Sequence[str] = (),
    vary: Mapping[str, Iterable[Any]] | None = None,
    seed: int | None = None,
    workers: int | None = None,
    against: str | os.PathLike[str] | None = None,
    flent_on: str | None = None,
    metric_vs: str | None = None,
    **overrides: Any,
) -> Comparison | Against:
    """``txop compare``: the scenario under every stack of ``stacks`` times every
    value of ``vary`` (``{"stations.count": [1, 4, 16]}``), side by side; ``workers``
    threads (default: the machine's cores), without the GIL. ``metric_vs`` (a varied
    key with numeric values) adds ``--metric-vs KEY``'s chart: its table in the
    summary, :attr:`Comparison.metric_vs`, and its plot in :meth:`write`'s directory;
    vary ``seed`` for each point's range.

    With ``against`` (a real ``.flent.gz`` file), ``txop compare --against``: the
    file's test run in ``scenario`` (default ``tcp-ndown-6mbit``) with at most one
    stack and the keyword overrides, held against the file; ``flent_on``
    (``"station"`` or ``"server"``) says where flent ran if the file does not. Returns
    an :class:`Against`."""
    if against is not None:
        if metric_vs is not None:
            raise _txop.TxopError("metric_vs: not with against=FILE (one run has no x axis)")
        return _against(scenario, stacks, vary, seed, against, flent_on, overrides)
    if flent_on is not None:
        raise _txop.TxopError("flent_on: only with against=FILE")
    if scenario is None:
        raise _txop.TxopError("compare: give a scenario (or against=FILE)")
    sc = _as_scenario(scenario, {_key(k): v for k, v in overrides.items()})
    if isinstance(stacks, (str, bytes)) or not isinstance(stacks, Iterable):
        raise _txop.TxopError(f"stacks: expected a list of stack names, not {stacks!r}")
    stack_list = builtins.list(stacks)
    for s in stack_list:
        if not isinstance(s, str):
            raise _txop.TxopError(f"stacks: {s!r} is not a stack name")
    vary_args = [
        f"{k}=" + ",".join(set_text(k, v)[1] for v in values_of(f"vary {k}", values))
        for k, values in (vary or {}).items()
    ]
    set_args = [f"{k}={v}" for k, v in sc.sets()]
    workers = check_workers(workers)
    if metric_vs is not None and not isinstance(metric_vs, str):
        raise _txop.TxopError(f"metric_vs: expected a varied key's name, not {metric_vs!r}")
    native = _txop.compare(
        sc.spec,
        stack_list,
        vary_args,
        set_args,
        check_seed(seed),
        workers or os.cpu_count() or 1,
        None if metric_vs is None else _key(metric_vs),
    )
    return Comparison(native)


def _against(
    scenario: str | os.PathLike[str] | Scenario | None,
    stacks: Sequence[str],
    vary: Mapping[str, Iterable[Any]] | None,
    seed: int | None,
    against: str | os.PathLike[str],
    flent_on: str | None,
    overrides: Mapping[str, Any],
) -> Against:
    """:func:`compare` with ``against``: one run, as ``txop compare --against``."""
    if vary:
        raise _txop.TxopError("against: runs one setting; vary is for comparing settings")
    stack_list = builtins.list(stacks) if not isinstance(stacks, (str, bytes)) else [stacks]
    if len(stack_list) > 1:
        raise _txop.TxopError("against: runs one setting: give one stack (or stack=NAME)")
    keys = {_key(k): v for k, v in overrides.items()}
    if stack_list:
        keys = {"stack": stack_list[0], **keys}
    base = _txop.AGAINST_DEFAULT_BASE if scenario is None else scenario
    sc = _as_scenario(base, keys)
    set_args = [f"{k}={v}" for k, v in sc.sets()]
    native = _txop.against(
        _path("against", against), sc.spec, set_args, check_seed(seed), flent_on
    )
    return Against(native)


def stacks() -> dict[str, dict[str, Any]]:
    """The stack presets (kernel eras), as ``txop stacks`` lists them: name ->
    ``{"summary": …, "knobs": {knob: value}}``."""
    return {
        name: {"summary": summary, "knobs": dict(knobs)}
        for name, summary, knobs in _txop.stacks()
    }


def list_() -> dict[str, dict[str, str]]:
    """What ``txop list`` lists: ``{"scenarios": {name: description}, "flent_tests":
    {name: what}, "stacks": {name: summary}}``."""
    return {
        "scenarios": dict(_txop.scenarios()),
        "flent_tests": dict(_txop.flent_tests()),
        "stacks": {name: summary for name, summary, _ in _txop.stacks()},
    }
