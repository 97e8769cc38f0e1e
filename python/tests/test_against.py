"""txop.compare(against=FILE): a real flent file held against txop's run, as
``txop compare --against``. The files are written here, small and synthetic."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest
import txop


def _tcp_download(egress_iface: str = "wlan0") -> dict:
    """tcp_download, 4 s of load between 1 s of pings alone (0.2 s steps, 0-6 s). In
    the loaded period the download is 4, 1, 3, 2, 10 Mbit/s and the ping 5 and 7 ms;
    outside it, values that would move the statistics if they were counted."""
    x = [round(i * 0.2, 1) for i in range(31)]
    tcp = [None] * 31
    for t, v in [(1.0, 4.0), (1.2, 1.0), (1.4, 3.0), (1.6, 2.0), (1.8, 10.0), (0.2, 999.0)]:
        tcp[x.index(t)] = v
    ping = [None] * 31
    for t, v in [(1.0, 5.0), (3.0, 7.0), (5.8, 1000.0)]:
        ping[x.index(t)] = v
    return {
        "version": 3,
        "x_values": x,
        "results": {"TCP download": tcp, "Ping (ms) ICMP": ping},
        "metadata": {
            "NAME": "tcp_download", "LENGTH": 4, "TOTAL_LENGTH": 6, "STEP_SIZE": 0.2,
            "HOSTS": ["10.0.0.1"], "EGRESS_INFO": {"iface": egress_iface},
        },
    }


def _write(path, data: dict):
    path.write_bytes(gzip.compress(json.dumps(data).encode()))
    return path


def test_against_gives_the_bytes_of_the_command_and_numpys_statistics(tmp_path, cli):
    f = _write(tmp_path / "dl.flent.gz", _tcp_download())
    a = txop.compare(against=f, seed=2, stack="linux-4.9")
    code, out, err = cli(
        "compare", "--against", str(f), "--seed", "2", "--set", "stack=linux-4.9", "--json"
    )
    assert code == 0, err
    assert a.json.encode() == out
    assert a.mapping["test"] == "tcp_1down"
    rows = a.rows
    # The real side, with numpy's percentiles of the loaded period's values.
    dl, ping = [4.0, 1.0, 3.0, 2.0, 10.0], [5.0, 7.0]
    assert rows.loc["TCP download", "real_p50"] == np.percentile(dl, 50) == 3.0
    assert rows.loc["TCP download", "real_p90"] == pytest.approx(np.percentile(dl, 90))
    assert rows.loc["Ping (ms) ICMP", "real_p90"] == pytest.approx(np.percentile(ping, 90))
    # The txop side, from its own results: the ping's RTT samples in the loaded period
    # (one per step, as its flent file has them).
    flow = next(f for f in a.results["results"]["flows"] if f["label"] == "Ping (ms) ICMP")
    rtts = {}
    for t, rtt in flow["rtt_samples"]:
        rtts[int(t / 0.2)] = rtt  # the last reply of each step, as the flent file keeps
    loaded = [v for i, v in rtts.items() if 1.0 - 1e-9 <= round(i * 0.2, 3) <= 5.0 + 1e-9]
    assert rows.loc["Ping (ms) ICMP", "txop_p50"] == pytest.approx(np.percentile(loaded, 50))
    r = rows.loc["Ping (ms) ICMP"]
    assert r["p50_ratio"] == pytest.approx(r["txop_p50"] / r["real_p50"])
    a.write(tmp_path / "out")
    assert (tmp_path / "out" / "summary.txt").read_text() == a.summary
    assert (tmp_path / "out" / "throughput.png").is_file()


def test_a_file_that_cannot_be_mapped_raises_naming_it(tmp_path):
    data = _tcp_download()
    data["metadata"]["NAME"] = "cubic_bbr"
    f = _write(tmp_path / "cb.flent.gz", data)
    with pytest.raises(txop.TxopError, match=r"cb\.flent\.gz: cannot map: flent test `cubic_bbr`"):
        txop.compare(against=f)
    data = _tcp_download()
    del data["metadata"]["EGRESS_INFO"]
    f = _write(tmp_path / "x.flent.gz", data)
    with pytest.raises(txop.TxopError, match="give --flent-on"):
        txop.compare(against=f)
    assert txop.compare(against=f, flent_on="server").mapping["test"] == "tcp_1up"
    with pytest.raises(txop.TxopError, match="flent_on"):
        txop.compare(against=f, flent_on="sideways")
    with pytest.raises(txop.TxopError, match="one setting"):
        txop.compare(against=f, stacks=["linux-4.9", "linux-6.16"])
