"""The example notebook runs end to end (so it cannot rot) and draws its figure."""

from __future__ import annotations

import pathlib

import nbclient
import nbformat

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def test_the_example_notebook_runs_and_draws_its_figure(tmp_path, monkeypatch):
    monkeypatch.setenv("TXOP_EXAMPLE_OUT", str(tmp_path))
    monkeypatch.setenv("TXOP_EXAMPLE_CACHE", str(tmp_path / "cache"))
    nb = nbformat.read(EXAMPLES / "latency-vs-stations.ipynb", as_version=4)
    nbclient.NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(EXAMPLES)}}
    ).execute()
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert errors == []
    png = tmp_path / "latency-vs-stations.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(list((tmp_path / "cache").glob("*.json.gz"))) == 150
