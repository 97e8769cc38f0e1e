"""``python3 -m txop sweep …``: what ``txop sweep`` runs (the Rust command hands its
arguments here).

    txop sweep SCENARIO --vary KEY=V1,V2,… [--vary …] [--set KEY=VALUE]… \\
        [--seeds 1-10] [--scheduler ADDRESS] [--workers N] -o DIR

writes DIR/sweep.nc (the ``xarray.Dataset`` of :func:`txop.sweep`, netCDF), one results
directory per point under DIR/runs/, and keeps its cache in DIR/cache (``--cache`` to
put it elsewhere): running the same command again computes only what is missing.
Running into an existing DIR with other settings rewrites the point folders whose
results differ and removes txop's point folders that are not points of this sweep; a
point folder holding a user's file stops the sweep before it runs. SIGTERM and SIGHUP
stop the workers and exit 128 + the signal.
Exit codes as ``txop``'s: 0 ok, 2 a usage or input error (one line), 1 an internal
error; a sweep whose points failed still writes its dataset and exits 0, saying how
many failed on stderr.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence
from typing import Any, NoReturn


class _Usage(Exception):
    pass


class _Terminated(BaseException):
    """SIGTERM or SIGHUP: raised in the main thread so that the sweep stops its
    workers (the local pool's ``finally``) and closes its Dask client on the way out."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _on_signal(signum: int, _frame: Any) -> None:
    raise _Terminated(signum)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2, as txop's usage errors
        raise _Usage(f"{message}; see `txop sweep --help`")


def _parser() -> argparse.ArgumentParser:
    from txop._sweep import MAX_RUNS

    p = _Parser(
        prog="txop sweep",
        description="Run a scenario over a grid of settings and seeds (locally or on a "
        "Dask cluster) and write the results as a netCDF dataset plus one results "
        "directory per point.",
        epilog="Examples:\n"
        "  txop sweep default --vary stack=linux-4.9,linux-6.16 --seeds 1-5 -o sw\n"
        "  txop sweep rrul.toml --vary stations.count=1,4,16 --seeds 1-10 "
        "--scheduler tcp://10.0.0.5:8786 -o sw",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("scenario", help="built-in scenario name (txop list) or scenario file")
    p.add_argument("--vary", action="append", default=[], metavar="KEY=V1,V2,…",
                   help="a grid axis: a scenario key and its values (repeatable; axes multiply)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a scenario key at every point (repeatable)")
    p.add_argument("--seeds", default="1", metavar="SEEDS",
                   help="seeds: N (1..N), A-B, or a comma-separated list (default 1); at most "
                   f"{MAX_RUNS:,} runs (points x seeds) in a sweep")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="a dask.distributed scheduler's address (default: a local process pool)")
    p.add_argument("--workers", type=int, metavar="N",
                   help="local worker processes (default: the machine's cores)")
    p.add_argument("-o", "--output", required=True, metavar="DIR",
                   help="write DIR/sweep.nc, DIR/runs/<point>/ and the cache DIR/cache")
    p.add_argument("--cache", metavar="DIR", help="the results cache (default: DIR/cache)")
    p.add_argument("--metric-vs", metavar="KEY",
                   help="chart the headline figures (throughput, delay p50 and p99, Jain's "
                   "index) against KEY, a --vary key with numeric values: a line per setting "
                   "of the other keys, each point the median of the seeds with their range; "
                   "prints its table and writes DIR/metric-vs-KEY.{txt,png,svg}")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar, no summary")
    return p


def _value(text: str) -> Any:
    """A ``--vary`` value: a TOML integer, float or boolean as that number or boolean
    (so that ``sweep.nc`` stores numbers as numbers, as :func:`txop.sweep` given
    Python numbers does); anything else as its ``--set`` text."""
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        try:
            import tomli as tomllib  # type: ignore[no-redef,import-not-found,unused-ignore]
        except ImportError:
            return text
    try:
        value = tomllib.loads(f"v = {text}")["v"]
    except ValueError:
        return text
    return value if isinstance(value, (bool, int, float)) else text


def _grid(vary: Sequence[str]) -> dict[str, list[Any]]:
    grid: dict[str, list[Any]] = {}
    for v in vary:
        key, sep, values = v.partition("=")
        vals = [_value(x.strip()) for x in values.split(",") if x.strip()]
        if not sep or not key.strip() or not vals:
            raise _Usage(f"--vary {v}: expected KEY=V1,V2,…")
        if key.strip() in grid:
            raise _Usage(f"--vary {key.strip()}: the key is varied twice; give all its values in one --vary")
        grid[key.strip()] = vals
    return grid


def sweep_main(argv: Sequence[str]) -> int:
    import txop

    args = _parser().parse_args(argv)
    if args.workers is not None and args.workers < 1:
        raise _Usage("--workers: expected at least 1; see `txop sweep --help`")
    overrides = {}
    for s in args.set:
        key, sep, value = s.partition("=")
        if not sep or not key.strip():
            raise _Usage(f"--set {s}: expected KEY=VALUE")
        overrides[key.strip()] = value.strip()
    out = args.output
    if os.path.exists(out) and not os.path.isdir(out):
        raise txop.TxopError(f"{out}: exists and is not a directory")
    if not os.path.exists(out):
        _NEW_OUTPUT.append(out)
    sc = txop.scenario(args.scenario, overrides)
    grid = _grid(args.vary)
    if args.metric_vs is not None:
        _check_metric_vs(args.metric_vs, grid)
    ds = txop.sweep(
        sc,
        grid=grid,
        seeds=args.seeds,
        client=args.scheduler,
        workers=args.workers,
        cache=args.cache or os.path.join(out, "cache"),
        progress=not args.quiet,
        results_dirs=os.path.join(out, "runs"),
    )
    tmp = os.path.join(out, ".sweep.nc.tmp")
    ds.to_netcdf(tmp)
    os.replace(tmp, os.path.join(out, "sweep.nc"))
    failed = int(ds.attrs["points_failed"])
    if failed:
        print(f"txop: warning: {failed} of {ds['error'].size} points failed; "
              "their messages are in sweep.nc's `error`", file=sys.stderr)
    if not args.quiet:
        print(f"{out}/sweep.nc: {ds['error'].size} points, "
              f"dimensions {dict(ds['error'].sizes)}")
    if args.metric_vs is not None:
        chart = txop.metric_vs(ds, args.metric_vs)
        chart.write(out)
        if not args.quiet:
            print()
            print(chart.table, end="")
    return 0


def _check_metric_vs(key: str, grid: dict[str, list[Any]]) -> None:
    """Refuse ``--metric-vs KEY`` before the sweep runs, in the words ``txop compare``
    uses: the seed, a key not varied, or values that are not numbers."""
    from txop import _txop
    from txop._api import toml_literal

    no_figures: list[float | None] = [None] * 4
    runs: list[tuple[list[tuple[str, str]], str | None, list[float | None]]] = [
        ([(key, toml_literal(v))], None, no_figures) for v in grid.get(key, [])
    ]
    _txop.metric_vs("", key, runs)


#: The output folder, if this command is the one creating it: removed again if the
#: command fails before it has written a file there.
_NEW_OUTPUT: list[str] = []


def _remove_if_no_file(out: str) -> None:
    """Remove ``out`` if it holds folders only (no file): what a sweep stopped by a bad
    input before its first result leaves (the cache folder, empty)."""
    for _root, _dirs, files in os.walk(out):
        if files:
            return
    for root, _dirs, _files in sorted(os.walk(out), key=lambda w: -len(w[0])):
        try:
            os.rmdir(root)
        except OSError:
            return


def main(argv: Sequence[str] | None = None) -> int:
    code = _main(argv)
    if code == 2:
        for out in _NEW_OUTPUT:
            _remove_if_no_file(out)
    return code


def _main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] != "sweep":
        print("usage: python3 -m txop sweep SCENARIO --vary KEY=V1,V2 … -o DIR", file=sys.stderr)
        return 2
    try:
        from txop import TxopError, TxopInternalError
    except ImportError as e:
        print(f"txop: error: the Python package txop is not installed ({e}); "
              "./scripts/setup.sh installs it", file=sys.stderr)
        return 2
    for name in ("SIGTERM", "SIGHUP"):  # SIGHUP: not on Windows
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), _on_signal)
    try:
        return sweep_main(argv[1:])
    except _Terminated as e:
        print(f"txop: stopped by {signal.Signals(e.signum).name}; run the same command "
              "again to resume", file=sys.stderr)
        return 128 + e.signum
    except _Usage as e:
        print(f"txop: error: {e}", file=sys.stderr)
        return 2
    except TxopError as e:
        print(f"txop: error: {e}", file=sys.stderr)
        return 2
    except TxopInternalError as e:
        print(str(e), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("txop: interrupted; run the same command again to resume", file=sys.stderr)
        return 130
    except OSError as e:
        print(f"txop: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
