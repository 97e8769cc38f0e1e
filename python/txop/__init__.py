"""txop from Python: WiFi cells under load, run by the same Rust model as the ``txop``
command, with results as pandas DataFrames and sweeps as xarray Datasets.

>>> import txop
>>> sc = txop.scenario("default", {"stations.list[0].count": 1}, stack="linux-4.9")
>>> r = txop.run(sc, seed=1)
>>> r.flows[["kind", "throughput_bps", "latency_p50_ms"]]
>>> ds = txop.sweep("default", grid={"stack": ["linux-4.9", "linux-6.16"]}, seeds=3)

Errors in what you give (an unknown scenario, key or value) raise :class:`TxopError`
(a ``ValueError``) whose message is the line ``txop`` prints after ``txop: error:``.
"""

from __future__ import annotations

from . import _txop
from ._api import (
    Against,
    Comparison,
    Result,
    Scenario,
    compare,
    run,
    scenario,
    stacks,
)
from ._api import (
    list_ as list,
)
from ._sweep import MetricChart, metric_vs, sweep

__version__: str = _txop.__version__
TxopError = _txop.TxopError
TxopInternalError = _txop.TxopInternalError

__all__ = [
    "Against",
    "Comparison",
    "MetricChart",
    "Result",
    "Scenario",
    "TxopError",
    "TxopInternalError",
    "__version__",
    "compare",
    "list",
    "metric_vs",
    "run",
    "scenario",
    "stacks",
    "sweep",
]
