"""bench/bench_agent.py: its local servers listen on free ports and refuse to run on a taken
one; each row measures what its label says."""

from __future__ import annotations

import http.client
import socket
from pathlib import Path

import pytest

from bench import bench_agent


def test_servers_listen_on_free_ports_and_answer() -> None:
    a, port_a = bench_agent.start_server()
    b, port_b = bench_agent.start_server("--tool-first")
    try:
        assert port_a != port_b and port_a > 0
        conn = http.client.HTTPConnection("127.0.0.1", port_a, timeout=30)
        conn.request("POST", "/v1/chat/completions", body=b'{"messages":[{"role":"user","content":"hi"}]}',
                     headers={"content-type": "application/json"})  # fmt: skip
        body = conn.getresponse().read()
        assert b"Hello " in body and b"[DONE]" in body
    finally:
        for p in (a, b):
            p.terminate()
            p.wait()


def test_a_taken_port_stops_the_benchmark() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(SystemExit) as e:
            bench_agent.start_server(port=port)
    assert "did not start" in str(e.value) and f"127.0.0.1:{port}" in str(e.value)


def test_each_sessions_list_row_measures_what_its_label_says() -> None:
    rows = bench_agent.cases(["ama"], catalog=Path("/c"), load=["load"], big_mb=20, resume_id="r")
    listing = [(label, argv) for label, argv, _ in rows if "sessions list" in label]
    assert len(listing) == 2
    for label, argv in listing:
        assert ("--no-cache" in argv) == ("no index" in label), label
