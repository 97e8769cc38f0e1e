"""Fixtures of the Python package's tests: the `txop` binary to compare against."""

from __future__ import annotations

import os
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


def _find_bin() -> pathlib.Path:
    candidates = []
    if os.environ.get("TXOP_BIN"):
        candidates.append(pathlib.Path(os.environ["TXOP_BIN"]))
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    candidates.append(target / "release" / "txop")
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return c
    pytest.fail(
        "no txop binary: build it (cargo build --release -p txop) or set TXOP_BIN; "
        f"looked at {', '.join(map(str, candidates))}"
    )


@pytest.fixture(scope="session")
def txop_bin() -> pathlib.Path:
    """The command-line binary the package must agree with."""
    return _find_bin()


@pytest.fixture(scope="session")
def cli(txop_bin):
    """Run `txop ARGS…`: (exit code, stdout bytes, stderr text)."""

    def run(*args: str, cwd=None):
        p = subprocess.run([str(txop_bin), *args], capture_output=True, cwd=cwd, check=False)
        return p.returncode, p.stdout, p.stderr.decode()

    return run
