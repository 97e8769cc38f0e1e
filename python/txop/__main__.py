"""``python3 -m txop sweep …``: what ``txop sweep`` runs (the Rust command hands its
arguments here).

    txop sweep SCENARIO --vary KEY=V1,V2,… [--vary …] [--set KEY=VALUE]… \\
        [--seeds 1-10] [--scheduler ADDRESS] [--workers N] -o DIR

writes DIR/sweep.nc (the ``xarray.Dataset`` of :func:`txop.sweep`, netCDF), one results
directory per point under DIR/runs/, and keeps its cache in DIR/cache (``--cache`` to
put it elsewhere): running the same command again computes only what is missing.
Exit codes as ``txop``'s: 0 ok, 2 a usage or input error (one line), 1 an internal
error; a sweep whose points failed still writes its dataset and exits 0, saying how
many failed on stderr.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Optional, Sequence


class _Usage(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, as txop's usage errors
        raise _Usage(f"{message}; see `txop sweep --help`")


def _parser() -> argparse.ArgumentParser:
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
                   help="seeds: N (1..N), A-B, or a comma-separated list (default 1)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="a dask.distributed scheduler's address (default: a local process pool)")
    p.add_argument("--workers", type=int, metavar="N",
                   help="local worker processes (default: the machine's cores)")
    p.add_argument("-o", "--output", required=True, metavar="DIR",
                   help="write DIR/sweep.nc, DIR/runs/<point>/ and the cache DIR/cache")
    p.add_argument("--cache", metavar="DIR", help="the results cache (default: DIR/cache)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar, no summary")
    return p


def _grid(vary: Sequence[str]) -> dict[str, list[str]]:
    grid: dict[str, list[str]] = {}
    for v in vary:
        key, sep, values = v.partition("=")
        vals = [x.strip() for x in values.split(",") if x.strip()]
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
    sc = txop.scenario(args.scenario, overrides)
    ds = txop.sweep(
        sc,
        grid=_grid(args.vary),
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
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
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
    try:
        return sweep_main(argv[1:])
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
