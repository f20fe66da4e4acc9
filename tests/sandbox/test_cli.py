"""``ama sandbox status`` and ``ama sandbox exec`` as a user runs them (real processes)."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ama.sandbox import SandboxStatus


def ama(*args: str, cwd: Path, env: dict[str, str] | None = None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ama", "sandbox", *args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
        **kw,
    )


@pytest.mark.parametrize("args", [[], ["status"], ["exec"]])
def test_help(tmp_path: Path, args: list[str]):
    proc = ama(*args, "--help", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.startswith("usage: ama sandbox")
    if args == ["exec"]:
        assert "ama sandbox exec [--network allow] [--writable PATH] -- CMD [ARG ...]" in proc.stdout


def test_no_subcommand_prints_help_and_exits_2(tmp_path: Path):
    proc = ama(cwd=tmp_path)
    assert proc.returncode == 2 and "status" in proc.stdout and "exec" in proc.stdout


def test_status_json(tmp_path: Path):
    proc = ama("status", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert set(out) >= {
        "kind",
        "executable",
        "isolatesNetwork",
        "restrictsWrites",
        "explanation",
        "bash",
        "warnings",
    }
    assert out["kind"] in ("bwrap", "unshare", "sandbox-exec", "none")
    assert (
        out["bash"]["setting"] == "off"
        and out["bash"]["active"] is False
        and out["bash"]["network"] == "deny"
    )
    home = os.environ["HOME"]
    assert f"{home}/.ssh" in out["bash"]["unreadable"]


def test_status_shows_project_cannot_loosen(tmp_path: Path):
    (tmp_path / ".ama").mkdir()
    (tmp_path / ".ama" / "config.json").write_text(
        json.dumps({"sandbox": {"bash": "auto", "writable": ["/"]}})
    )
    proc = ama("status", "--json", cwd=tmp_path)
    out = json.loads(proc.stdout)
    assert out["bash"]["setting"] == "off" and out["bash"]["writable"] == []
    assert proc.stderr.count("a project may not set") == 2


def test_status_off(tmp_path: Path):
    proc = ama("status", cwd=tmp_path, env={"AMA_SANDBOX": "off"})
    assert proc.returncode == 0
    assert "sandbox:          none" in proc.stdout and "AMA_SANDBOX=off" in proc.stdout


def test_status_warns_about_relative_writable(tmp_path: Path):
    home = Path(os.environ["AMA_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps({"sandbox": {"writable": ["cache", "~/.npm"]}}))
    proc = ama("status", cwd=tmp_path)
    assert proc.returncode == 0
    assert "sandbox.writable: relative path 'cache' ignored" in proc.stderr
    assert "~/.npm (missing, ignored)" in proc.stdout


def test_exec_runs_the_command_with_its_exit_code_and_output(bwrap_status: SandboxStatus, tmp_path: Path):
    proc = ama("exec", "--", "sh", "-c", "echo out; echo err >&2; echo made > f; exit 7", cwd=tmp_path)
    assert proc.returncode == 7
    assert proc.stdout == "out\n" and proc.stderr == "err\n"
    assert (tmp_path / "f").read_text() == "made\n"


def test_exec_denies_writes_outside_and_allows_writable(bwrap_status: SandboxStatus, tmp_path: Path):
    ws, other = tmp_path / "ws", tmp_path / "other"
    ws.mkdir()
    other.mkdir()
    proc = ama("exec", "--", "sh", "-c", f"echo x > {other}/f", cwd=ws)
    assert proc.returncode != 0 and "Read-only file system" in proc.stderr
    assert not (other / "f").exists()
    proc = ama("exec", "--writable", str(other), "--", "sh", "-c", f"echo x > {other}/f", cwd=ws)
    assert proc.returncode == 0 and (other / "f").read_text() == "x\n"


def test_exec_network_flag(bwrap_status: SandboxStatus, tmp_path: Path):
    probe = "awk -F: 'NR > 2 {print $1}' /proc/net/dev | sort"  # interfaces of the network namespace
    denied = ama("exec", "--", "sh", "-c", probe, cwd=tmp_path)
    allowed = ama("exec", "--network", "allow", "--", "sh", "-c", probe, cwd=tmp_path)
    host = subprocess.run(["sh", "-c", probe], capture_output=True, text=True).stdout
    assert denied.returncode == 0 and allowed.returncode == 0
    assert allowed.stdout == host
    assert denied.stdout.split() == ["lo"] and host.split() != ["lo"]


@pytest.mark.parametrize(
    ("args", "env", "code", "message"),
    [
        (["exec"], {}, 2, "missing command"),
        (["exec", "--"], {}, 2, "missing command"),
        (["exec", "--writable", "rel/dir", "--", "true"], {}, 2, "--writable needs an absolute path"),
        (["exec", "--", "true"], {"AMA_SANDBOX": "off"}, 1, "no OS sandbox that restricts writes works here"),
    ],
)
def test_exec_user_errors(tmp_path: Path, args, env, code, message):
    proc = ama(*args, cwd=tmp_path, env=env)
    assert proc.returncode == code
    assert proc.stderr.startswith("ama: error: ") and message in proc.stderr
    assert "Traceback" not in proc.stderr


def test_exec_bad_network_value(tmp_path: Path):
    proc = ama("exec", "--network", "sometimes", "--", "true", cwd=tmp_path)
    assert proc.returncode == 2 and "invalid choice" in proc.stderr and "Traceback" not in proc.stderr


def test_imports_stay_light(tmp_path: Path):
    code = (
        "import sys\n"
        "from ama.cli.main import main\n"
        "rc = main(['sandbox', 'status', '--json'])\n"
        "heavy = {'httpx', 'rich', 'prompt_toolkit', 'msgspec'} & {m.split('.')[0] for m in sys.modules}\n"
        "print(sorted(heavy), file=sys.stderr)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0
    assert proc.stderr.strip().splitlines()[-1] == "[]"


def test_exec_command_cannot_inject_into_the_terminal(bwrap_status: SandboxStatus, tmp_path: Path):
    """--new-session: the sandboxed command has no controlling terminal, so TIOCSTI cannot type into it."""
    injector = tmp_path / "inject.py"
    injector.write_text(
        "import fcntl, termios\n"
        "try:\n"
        "    for c in b'echo INJECTED\\n': fcntl.ioctl(0, termios.TIOCSTI, bytes([c]))\n"
        "except OSError as e: print('refused', e.errno)\n"
    )

    def injected(argv: list[str]) -> bytes:
        master, slave = pty.openpty()
        try:
            proc = subprocess.Popen(
                ["setsid", "-c", *argv], stdin=slave, stdout=slave, stderr=slave, cwd=tmp_path
            )
            proc.wait(timeout=60)
            time.sleep(0.05)
            os.set_blocking(master, False)
            try:
                while os.read(master, 4096):  # drain what the command printed
                    pass
            except BlockingIOError:
                pass
            os.set_blocking(slave, False)
            try:
                return os.read(slave, 4096)  # input waiting on the terminal = what was injected
            except BlockingIOError:
                return b""
        finally:
            os.close(master)
            os.close(slave)

    sandboxed = injected(
        [sys.executable, "-m", "ama", "sandbox", "exec", "--", sys.executable, str(injector)]
    )
    assert b"INJECTED" not in sandboxed
    control = injected([sys.executable, str(injector)])
    legacy = Path("/proc/sys/dev/tty/legacy_tiocsti")
    if legacy.exists() and legacy.read_text().strip() == "1":
        assert b"INJECTED" in control  # the same command outside the sandbox does inject


def test_exec_scrubs_credentials_by_name_and_by_value(bwrap_status: SandboxStatus, tmp_path: Path):
    """The same environment policy as the bash tool: names that hold credentials, and values
    shaped like a token whatever the name (sandbox/ itself checks only names)."""
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    proc = ama(
        "exec",
        "--",
        "env",
        cwd=tmp_path,
        env={"INNOCENT_NAME": token, "MY_API_TOKEN": "x", "DATABASE_URL": "postgres://u:pw@db/x", "PLAIN": "kept"},
    )
    assert proc.returncode == 0, proc.stderr
    assert "PLAIN=kept" in proc.stdout
    for gone in (token, "MY_API_TOKEN", "pw@db"):
        assert gone not in proc.stdout
