"""A SIGKILL of ama takes every process its bash tool started with it (real processes)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from tests.agent.helpers import write_script
from tests.conftest import ama_cmd

WAIT_S = 60.0  # a generous bound for a loaded machine; nothing here asserts a duration


def _pids_with(marker: str) -> list[int]:
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmd = f.read()
            with open(f"/proc/{name}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        argv = cmd.split(b"\0")
        if argv[0] == b"sleep" and marker.encode() in cmd.replace(b"\0", b" ") and state not in (b"Z", b"X"):
            out.append(int(name))
    return out


def _until(pred, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not pred():
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what}")
        time.sleep(0.05)


@pytest.mark.parametrize("command", ["sleep {n}", "sleep {n} & sleep {m}; echo done"], ids=["exec", "forked"])
@pytest.mark.parametrize("background", [False, True], ids=["foreground", "background"])
@pytest.mark.parametrize("sandbox", ["off", "auto"])
def test_sigkill_of_ama_kills_the_bash_children(
    tmp_path: Path, command: str, background: bool, sandbox: str
) -> None:
    # unique sleep lengths mark this test's processes in /proc
    n = 100_000 + uuid.uuid4().int % 100_000
    marker = f"sleep {n}"
    args: dict = {"command": command.format(n=n, m=n + 1)}
    if background:
        args["background"] = True
    turns = [
        {"toolCalls": [{"name": "bash", "arguments": args}]},
        {"toolCalls": [{"name": "bash", "arguments": {"command": "sleep 600"}}]},
    ]
    model = write_script(tmp_path / "s.json", turns, mode="sequence")
    env = dict(os.environ)
    if sandbox == "off":
        env["AMA_SANDBOX"] = "off"  # else whatever this machine has (bwrap: --die-with-parent)
    p = subprocess.Popen(
        ama_cmd("-p", "go", "--model", model, "--permission-mode", "full-auto"),
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _until(lambda: _pids_with(marker), "the command to start")
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
        _until(
            lambda: not _pids_with(marker) and not _pids_with(f"sleep {n + 1}"),
            "ama's children to die with it",
        )
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        for pid in _pids_with(marker) + _pids_with(f"sleep {n + 1}"):
            os.kill(pid, signal.SIGKILL)
