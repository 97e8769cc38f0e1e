"""A sweep from a script: the `default` cell's median latency (the median over its
flows of each flow's p50) as stations are added, in two kernel eras, 3 seeds each.

    python3 examples/sweep.py

The sweep runs on a pool of worker processes that each import this script, so it
calls ``txop.sweep`` under ``if __name__ == "__main__":`` (docs/python.md, "Scripts"):
without the guard every worker would start a sweep of its own, which txop refuses.
"""

import txop


def main() -> None:
    ds = txop.sweep(
        "default",
        grid={"stations.list[0].count": [1, 4, 8], "stack": ["linux-4.9", "linux-6.16"]},
        seeds=3,
        duration_s=5,
        progress=False,
    )
    p50 = ds.flow_latency_p50_ms.median("flow").mean("seed")
    print(p50.to_pandas().round(2))


if __name__ == "__main__":
    main()
