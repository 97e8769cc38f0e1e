#!/usr/bin/env python3
"""Benchmark of txop's Python layer and sweeps (not a test: figures to read).

    python3 scripts/bench-sweep.py [--txop target/release/txop] [--duration-s 60]

Prints:
- a 40-point sweep (4 stacks x 5 station counts x 2 seeds of `default`) on a local pool
  of 1 worker and of 2 workers: wall times and their ratio (the issue asks >= 1.8x on 2
  cores);
- the same sweep run again on its cache: its time as a fraction of the first run's
  (the issue asks < 5 %);
- the per-run overhead of the Python layer against the command line: one short run
  (`default`, 1 s simulated) through `txop run --json` (a process each), through
  `txop.run(...)` in one process (and its `.results` dict), and per point of a sweep.

Needs the package installed (./scripts/setup.sh) and, for the command line's figure,
the binary (`cargo build --release -p txop`).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import txop
import xarray  # noqa: F401  imported before the clock starts: the first sweep would pay it

GRID = {
    "stack": ["linux-4.8-bloated", "linux-4.9", "linux-5.5", "linux-6.16"],
    "stations.list[0].count": [1, 2, 3, 5, 8],
}


def timed(f):
    t = time.perf_counter()
    out = f()
    return time.perf_counter() - t, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    target = os.environ.get("CARGO_TARGET_DIR", "target")
    ap.add_argument("--txop", default=os.path.join(target, "release", "txop"))
    ap.add_argument("--duration-s", type=float, default=60.0,
                    help="simulated seconds per sweep point (default 60)")
    ap.add_argument("--repeat", type=int, default=30, help="short runs per overhead figure")
    args = ap.parse_args()

    base = txop.scenario("default", duration_s=args.duration_s)
    points = 1
    for v in GRID.values():
        points *= len(v)
    points *= 2
    print(f"txop {txop.__version__}, {os.cpu_count()} cores; sweep: {points} points of "
          f"`default` at {args.duration_s:g} s simulated")
    with tempfile.TemporaryDirectory() as tmp:
        t1, _ = timed(lambda: txop.sweep(base, grid=GRID, seeds=2, workers=1, progress=False,
                                         cache=os.path.join(tmp, "c1")))
        t2, ds = timed(lambda: txop.sweep(base, grid=GRID, seeds=2, workers=2, progress=False,
                                          cache=os.path.join(tmp, "c2")))
        assert (ds.error == "").all()
        t_again, again = timed(lambda: txop.sweep(base, grid=GRID, seeds=2, workers=2,
                                                  progress=False, cache=os.path.join(tmp, "c2")))
        assert again.identical(ds)
    # The same 40 runs one after the other in this process, without the sweep around them.
    def serial():
        for stack in GRID["stack"]:
            for n in GRID["stations.list[0].count"]:
                sc = base.set({"stack": stack, "stations.list[0].count": n})
                for seed in (1, 2):
                    txop._txop.run(sc.spec, sc.sets(), seed)
    t0, _ = timed(serial)
    print(f"the 40 runs in one process, serially: {t0:7.2f} s")
    print(f"sweep, 1 worker:   {t1:7.2f} s")
    print(f"sweep, 2 workers:  {t2:7.2f} s   (x{t1 / t2:.2f} faster)")
    print(f"re-run on cache:   {t_again:7.2f} s   ({100 * t_again / t2:.1f} % of the first run)")

    short = ["run", "default", "--set", "duration_s=1", "--json"]
    if os.path.exists(args.txop):
        cli = [timed(lambda: subprocess.run([args.txop, *short], check=True,
                                            capture_output=True))[0]
               for _ in range(args.repeat)]
        cli_ms = 1e3 * statistics.median(cli)
    else:
        cli_ms = float("nan")
        print(f"(no binary at {args.txop}: no command-line figure)")
    sc = txop.scenario("default", duration_s=1)
    native = [timed(lambda: txop._txop.run(sc.spec, sc.sets(), None))[0] for _ in range(args.repeat)]
    py = [timed(lambda: txop.run(sc).results)[0] for _ in range(args.repeat)]
    native_ms, py_ms = 1e3 * statistics.median(native), 1e3 * statistics.median(py)
    print(f"one 1-s run of `default`, median of {args.repeat}:")
    print(f"  simulation alone (native call):      {native_ms:7.2f} ms")
    print(f"  txop run --json (process + output):  {cli_ms:7.2f} ms   "
          f"(+{cli_ms - native_ms:.2f} ms)")
    print(f"  txop.run(...).results:               {py_ms:7.2f} ms   "
          f"(+{py_ms - native_ms:.2f} ms: JSON text and dict, validation)")
    with tempfile.TemporaryDirectory() as tmp:
        n = 40
        seeds = list(range(1, n + 1))
        t_sweep, _ = timed(lambda: txop.sweep(sc, seeds=seeds, workers=1, progress=False,
                                              cache=os.path.join(tmp, "c")))
    print(f"  per point of a 1-worker sweep of {n}:  {1e3 * t_sweep / n:7.2f} ms   "
          f"(+{1e3 * t_sweep / n - native_ms:.2f} ms: worker start, IPC, cache, dataset)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
