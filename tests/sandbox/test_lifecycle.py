"""Process lifecycle: the spawner thread, parent-death semantics, killing a sandbox by its pid."""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from ama.sandbox import SandboxStatus, make_bash_sandbox, spawn
from ama.sandbox.wrap import spawner_thread

from .conftest import processes_with, wait_until_gone


def test_spawn_runs_on_one_long_lived_thread(tmp_path: Path):
    seen = []
    for _ in range(2):
        proc = spawn(["sh", "-c", "exit 3"])
        assert proc.wait() == 3
        seen.append(spawner_thread())
    assert seen[0] is seen[1] and seen[0] is not None and seen[0].daemon and seen[0].is_alive()
    assert seen[0] is not threading.current_thread()
    with pytest.raises(FileNotFoundError):
        spawn([str(tmp_path / "no-such-program")])  # the error reaches the caller
    assert spawner_thread() is seen[0] and seen[0].is_alive()


def test_spawn_from_many_threads(tmp_path: Path):
    results: list[int] = []
    lock = threading.Lock()

    def work(i: int) -> None:
        rc = spawn(["sh", "-c", f"exit {i}"]).wait()
        with lock:
            results.append(rc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == list(range(8))


def _thread_gone(native_id: int) -> None:
    deadline = time.monotonic() + 10
    while os.path.exists(f"/proc/self/task/{native_id}") and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not os.path.exists(f"/proc/self/task/{native_id}")


def _sandboxed_sleep(tmp_path: Path, marker: str):
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    sandbox = make_bash_sandbox({"sandbox.bash": "auto"}, cwd=str(ws), data_dir=str(tmp_path))
    wrapped = sandbox.wrap(f"touch ready; sleep {marker}", cwd=str(ws))
    return sandbox, wrapped, ws / "ready"


@pytest.mark.parametrize("via_spawn", [True, False])
def test_die_with_parent_follows_the_spawning_thread(
    bwrap_status: SandboxStatus, tmp_path: Path, via_spawn: bool
):
    """bwrap dies when the *thread* that started it exits: spawn() uses a thread that lives on."""
    marker = f"7{secrets.randbelow(10**6)}.5"
    sandbox, wrapped, ready = _sandboxed_sleep(tmp_path, marker)
    box: dict = {}

    def start() -> None:
        popen = spawn if via_spawn else subprocess.Popen
        box["proc"] = popen(
            wrapped.argv,
            env=wrapped.env,
            pass_fds=wrapped.pass_fds,
            cwd=str(ready.parent),
            start_new_session=True,
        )
        box["tid"] = threading.get_native_id()
        deadline = time.monotonic() + 20
        while not ready.exists() and time.monotonic() < deadline:  # bwrap has set its death signal
            time.sleep(0.01)

    worker = threading.Thread(target=start)
    worker.start()
    worker.join()
    proc: subprocess.Popen = box["proc"]
    wrapped.close()
    try:
        assert ready.exists()
        _thread_gone(box["tid"])  # the worker thread has really exited
        if via_spawn:
            assert proc.poll() is None and processes_with(f"sleep {marker}") != []
        else:  # control: started from the short-lived thread, the sandbox died with it
            assert proc.wait(timeout=10) == -signal.SIGKILL
            assert wait_until_gone(f"sleep {marker}") == []
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        sandbox.close()
    assert wait_until_gone(f"sleep {marker}") == []  # killing bwrap's group ended the whole sandbox


def test_sigterm_to_the_group_ends_the_sandbox(bwrap_status: SandboxStatus, tmp_path: Path):
    """The bash tool's terminate path: SIGTERM to bwrap's group, which takes the pid namespace along."""
    marker = f"8{secrets.randbelow(10**6)}.5"
    sandbox, wrapped, ready = _sandboxed_sleep(tmp_path, marker)
    proc = spawn(
        wrapped.argv,
        env=wrapped.env,
        pass_fds=wrapped.pass_fds,
        cwd=str(ready.parent),
        start_new_session=True,
    )
    wrapped.close()
    try:
        deadline = time.monotonic() + 20
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert processes_with(f"sleep {marker}") != []
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
        assert wait_until_gone(f"sleep {marker}") == []
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        sandbox.close()


def test_sandbox_ends_when_the_agent_is_killed(bwrap_status: SandboxStatus, tmp_path: Path):
    """ama killed with SIGKILL (no cleanup code runs): its sandboxes end with it."""
    import json
    import sys

    from .conftest import REPO_SRC, RUNNER

    ws = tmp_path / "ws"
    ws.mkdir()
    marker = f"9{secrets.randbelow(10**6)}.5"
    request = {"command": f"touch ready; sleep {marker}", "cwd": str(ws)}
    (tmp_path / "tmp").mkdir()
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO_SRC),
        "AMA_HOME": str(tmp_path),
        "TMPDIR": str(tmp_path / "tmp"),
    }
    agent = subprocess.Popen(
        [sys.executable, str(RUNNER), json.dumps(request)], env=env, stdout=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 20
        while not (ws / "ready").exists() and time.monotonic() < deadline:
            assert agent.poll() is None
            time.sleep(0.01)
        assert processes_with(f"sleep {marker}") != []
    finally:
        agent.kill()
        agent.wait()
    assert wait_until_gone(f"sleep {marker}") == []
