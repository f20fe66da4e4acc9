"""Fixtures for the sandbox tests.

Real-sandbox tests need a working bwrap; without one they skip with the reason ``detect()``
gives (run ``pytest -rs`` to see it).  Escape tests run twice, as root and as an
unprivileged user (uid 65534 through ``setpriv`` when the tests run as root, else the
current user), each time through ``runner.py``, which does what the bash tool does.
"""

from __future__ import annotations

import compileall
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from ama.sandbox import SandboxStatus, detect

HERE = Path(__file__).resolve().parent
REPO_SRC = HERE.parents[1] / "src"
RUNNER = HERE / "runner.py"
NOBODY = 65534


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake HOME per test: nothing here reads or writes the real home."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "AMA_SANDBOX"):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture(scope="session")
def bwrap_status() -> SandboxStatus:
    status = detect()
    if status.kind != "bwrap":
        reason = f"no working bwrap on this machine: {status.explanation}"
        print(f"\n[sandbox tests] {reason}", file=sys.stderr)
        pytest.skip(reason)
    return status


def _chown_tree(path: Path, uid: int) -> None:
    os.chown(path, uid, uid)
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            os.chown(os.path.join(root, name), uid, uid, follow_symlinks=False)


@dataclass
class UserEnv:
    prefix: list[str]  # argv prefix that runs a command as the unprivileged user
    uid: int | None  # None: the tests already run unprivileged
    python: str
    lib: Path  # PYTHONPATH holding a readable copy of the ama package


@pytest.fixture(scope="session")
def user_env(bwrap_status: SandboxStatus) -> UserEnv:
    """How to run as an unprivileged user; skips (with the reason) if bwrap fails for one."""
    if os.geteuid() == 0:
        if not shutil.which("setpriv"):
            pytest.skip("setpriv (util-linux) is missing: cannot run as an unprivileged user")
        prefix = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
        uid: int | None = NOBODY
    else:
        prefix, uid = [], None
    lib = Path(tempfile.mkdtemp(prefix="ama-sbx-lib-"))
    lib.chmod(0o755)
    shutil.copytree(REPO_SRC / "ama", lib / "ama", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(RUNNER, lib / "runner.py")
    compileall.compile_dir(str(lib), quiet=1)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(lib)}
    probe_ws = lib / "probe-ws"
    probe_ws.mkdir()
    if uid is not None:
        os.chown(probe_ws, uid, uid)
    # a Python >= 3.11 the user can run, also inside the sandbox (the escape tests use it there)
    python, last = None, ""
    for candidate in dict.fromkeys(["/usr/bin/python3", sys.executable, shutil.which("python3") or ""]):
        if not candidate:
            continue
        request = {
            "command": '"$PY" -c "import sys; assert sys.version_info >= (3, 11); print(42 * 2)"',
            "cwd": str(probe_ws),
        }
        proc = subprocess.run(
            [*prefix, candidate, str(lib / "runner.py"), json.dumps(request)],
            env={**env, "PY": candidate, "HOME": str(probe_ws), "AMA_HOME": str(probe_ws)},
            capture_output=True,
            text=True,
            cwd=str(probe_ws),
        )
        if proc.returncode != 0:
            last = proc.stderr.strip()[-300:]
            continue
        result = json.loads(proc.stdout)
        if not result["active"]:
            shutil.rmtree(lib, ignore_errors=True)
            reason = f"bwrap does not work for an unprivileged user here: {result['explanation']}"
            print(f"\n[sandbox tests] {reason}", file=sys.stderr)
            pytest.skip(reason)
        if "84" in result["output"]:
            python = candidate
            break
        last = result["output"].strip()[-300:]
    if python is None:
        shutil.rmtree(lib, ignore_errors=True)
        pytest.skip(f"no Python >= 3.11 that the unprivileged user can run in the sandbox: {last}")
    yield UserEnv(prefix, uid, python, lib)
    shutil.rmtree(lib, ignore_errors=True)


class Box:
    """A workspace, a fake home, ama's home and a directory outside the workspace, for one user."""

    def __init__(self, base: Path, *, mode: str, prefix: list[str], uid: int | None, python: str, lib: Path):
        self.base, self.mode, self.prefix, self.uid, self.python, self.lib = (
            base,
            mode,
            prefix,
            uid,
            python,
            lib,
        )
        self.runner = RUNNER if mode == "root" else lib / "runner.py"
        self.ws = base / "ws"
        self.home = base / "home"
        self.outside = base / "outside"
        self.ama_home = base / "ama-home"
        self.tmp = base / "tmp"  # the runner's TMPDIR: a killed runner leaves its session TMPDIR here
        for d in (self.ws, self.home, self.outside, self.ama_home, self.tmp):
            d.mkdir(parents=True, exist_ok=True)

    def own(self) -> None:
        if self.uid is not None:
            _chown_tree(self.base, self.uid)

    def write(self, path: Path, text: str) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def env(self, **extra: str) -> dict[str, str]:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "AMA_HOME": str(self.ama_home),
            "PYTHONPATH": str(self.lib),
            "LC_ALL": "C.UTF-8",
            "PY": self.python,
            "WS": str(self.ws),
            "OUTSIDE": str(self.outside),
            "TMPDIR": str(self.tmp),
        }
        env.update(extra)
        return env

    def as_user(self, argv: list[str]) -> list[str]:
        return [*self.prefix, *argv]

    def run(self, command: str, *, env: dict[str, str] | None = None, **request) -> dict:
        """Run ``command`` through runner.py (as this box's user) and return its report."""
        self.own()
        req = {"command": command, "cwd": str(self.ws), **request}
        proc = subprocess.run(
            self.as_user([self.python, str(self.runner), json.dumps(req)]),
            env=self.env(**(env or {})),
            cwd=str(self.ws),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, f"runner failed (the agent side died?): {proc.stderr}"
        result = json.loads(proc.stdout)
        assert result["active"], f"sandbox not active: {result['explanation']}"
        return result


@pytest.fixture(params=["root", "user"])
def box(request: pytest.FixtureRequest, bwrap_status: SandboxStatus, tmp_path: Path):
    """The same escape test as root and as an unprivileged user."""
    if request.param == "root":
        if os.geteuid() != 0:
            pytest.skip("the tests do not run as root")
        yield Box(tmp_path / "box", mode="root", prefix=[], uid=None, python=sys.executable, lib=REPO_SRC)
        return
    user: UserEnv = request.getfixturevalue("user_env")
    base = Path(tempfile.mkdtemp(prefix="ama-sbx-test-"))
    base.chmod(0o755)
    try:
        yield Box(base, mode="user", prefix=user.prefix, uid=user.uid, python=user.python, lib=user.lib)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def processes_with(marker: str) -> list[int]:
    """Pids of live processes whose command line contains ``marker``."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
            with open(f"/proc/{name}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmdline and state not in (b"Z", b"X"):
            found.append(int(name))
    return found


def wait_until_gone(marker: str, timeout: float = 10.0) -> list[int]:
    """Wait (bounded) for processes with ``marker`` to disappear; return those still alive."""
    deadline = time.monotonic() + timeout
    while True:
        alive = processes_with(marker)
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.02)
