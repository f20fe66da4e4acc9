"""Detection: the probe, the fallback order, the explanations, the switches, the cache."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

import ama.sandbox
from ama.sandbox import SandboxStatus, detect, summary_line
from ama.sandbox.detect import explain_failure, parse_exit_code, probe
from ama.sandbox.profile import Policy, bwrap_argv

NO_FACTS: dict[str, str | None] = {
    "apparmor_restrict_unprivileged_userns": None,
    "unprivileged_userns_clone": None,
    "max_user_namespaces": "15000",
    "container": None,
}


def test_public_names_are_exactly_these():
    expected = [
        "BashSandbox",
        "build_policy",
        "detect",
        "make_bash_sandbox",
        "Policy",
        "ProfileError",
        "SandboxError",
        "SandboxStatus",
        "scrub_env",
        "spawn",
        "summary_line",
        "wrap_command",
        "WrappedCommand",
    ]
    assert ama.sandbox.__all__ == expected == sorted(expected, key=str.casefold)
    public = sorted(n for n in vars(ama.sandbox) if not n.startswith("_") and n not in {
        "annotations", "bash", "detect", "gitguard", "hint", "limits", "profile", "seccomp",
        "secretfiles", "wrap"})  # fmt: skip
    assert public == sorted(set(expected) - {"detect"})


def test_status_json_uses_camel_case_keys():
    status = SandboxStatus("bwrap", "/usr/bin/bwrap", True, True, "works")
    assert status.to_json() == {
        "kind": "bwrap",
        "executable": "/usr/bin/bwrap",
        "isolatesNetwork": True,
        "restrictsWrites": True,
        "explanation": "works",
    }


def test_summary_line():
    assert summary_line(SandboxStatus("bwrap", "/usr/bin/bwrap", True, True, "x")) == (
        "sandbox: bwrap /usr/bin/bwrap (writes restricted, network isolated)"
    )
    assert summary_line(SandboxStatus("unshare", "/usr/bin/unshare", True, False, "x")) == (
        "sandbox: unshare /usr/bin/unshare (writes NOT restricted, network isolated)"
    )
    assert summary_line(SandboxStatus("none", None, False, False, "bwrap is not installed")) == (
        "sandbox: none (bwrap is not installed)"
    )


def test_switched_off_by_env_or_setting_without_probing(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("AMA_SANDBOX", "off")
    status = detect()
    assert (status.kind, status.restricts_writes, status.isolates_network) == ("none", False, False)
    assert "AMA_SANDBOX=off" in status.explanation
    monkeypatch.delenv("AMA_SANDBOX")
    status = detect(enabled="off")
    assert status.kind == "none" and "sandbox.enabled: off" in status.explanation


def test_detect_is_cached_per_process():
    first = detect()
    assert detect() is first
    assert detect(refresh=True) == first  # probing again on the same machine gives the same answer


# ---------------------------------------------------------------------------- explanations


def test_apparmor_userns_restriction_is_named():
    facts = dict(NO_FACTS, apparmor_restrict_unprivileged_userns="1")
    text = explain_failure("bwrap: setting up uid map: Permission denied\n", facts=facts, euid=1000)
    assert text.startswith("bwrap: setting up uid map: Permission denied")
    assert "AppArmor" in text and "kernel.apparmor_restrict_unprivileged_userns=1" in text
    # root is not affected by that restriction: it is not blamed
    assert "AppArmor" not in explain_failure("x", facts=facts, euid=0)


def test_other_userns_causes_are_named():
    clone_off = dict(NO_FACTS, unprivileged_userns_clone="0")
    assert "kernel.unprivileged_userns_clone=0" in explain_failure("e", facts=clone_off, euid=1000)
    no_ns = dict(NO_FACTS, max_user_namespaces="0")
    assert "user.max_user_namespaces=0" in explain_failure("e", facts=no_ns, euid=0)
    container = dict(NO_FACTS, container="/.dockerenv")
    assert "container (/.dockerenv)" in explain_failure(
        "bwrap: Creating new namespace failed", facts=container, euid=0
    )
    assert "container" not in explain_failure("sh: 4: Syntax error", facts=container, euid=0)
    assert (
        explain_failure("only the message\nsecond\nthird", facts=NO_FACTS, euid=0)
        == "only the message / second"
    )


# ---------------------------------------------------------------------------- probing


def _fake_tool(directory: Path, name: str, script: str) -> None:
    path = directory / name
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def _path_with(tmp_path: Path, keep: list[str]) -> str:
    """A PATH holding only ``keep`` (symlinked from the real PATH) and the fakes in tmp_path/bin."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name in keep:
        real = shutil.which(name)
        if real and not (bin_dir / name).exists():
            (bin_dir / name).symlink_to(real)
    return str(bin_dir)


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="Linux only")
def test_failed_bwrap_falls_back_to_unshare_and_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    if subprocess.run(["unshare", "-r", "-n", "--", "true"], capture_output=True).returncode != 0:
        pytest.skip("unshare -r -n does not work here")
    path = _path_with(tmp_path, ["unshare", "true", "sh"])
    _fake_tool(tmp_path / "bin", "bwrap", "echo 'bwrap: setting up uid map: Permission denied' >&2; exit 1\n")
    monkeypatch.setenv("PATH", path)
    status = probe("linux")
    assert status.kind == "unshare"
    assert status.isolates_network and not status.restricts_writes
    assert status.executable == str(tmp_path / "bin" / "unshare")
    assert "bwrap: setting up uid map: Permission denied" in status.explanation
    assert "does not restrict writes" in status.explanation


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="Linux only")
def test_nothing_works_gives_none_with_every_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = _path_with(tmp_path, ["true", "sh"])
    _fake_tool(
        tmp_path / "bin", "unshare", "echo 'unshare: unshare failed: Operation not permitted' >&2; exit 1\n"
    )
    monkeypatch.setenv("PATH", path)
    status = probe("linux")
    assert (status.kind, status.executable, status.restricts_writes, status.isolates_network) == (
        "none",
        None,
        False,
        False,
    )
    assert "bwrap is not installed" in status.explanation
    assert "unshare: unshare failed: Operation not permitted" in status.explanation


def test_bwrap_whose_command_fails_is_not_usable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A bwrap that reports the probe command failing (json exit-code != 0) is rejected as such."""
    path = _path_with(tmp_path, ["true", "sh"])
    script = 'while [ $# -gt 0 ]; do [ "$1" = --json-status-fd ] && fd=$2; shift; done\n'
    script += 'printf \'{ "child-pid": 5 }\\n{ "exit-code": 159 }\\n\' >/dev/fd/$fd\nexit 159\n'
    _fake_tool(tmp_path / "bin", "bwrap", script)
    _fake_tool(tmp_path / "bin", "unshare", "exit 1\n")
    monkeypatch.setenv("PATH", path)
    status = probe("linux")
    assert status.kind == "none"
    assert "`true` exited with status 159 inside the sandbox" in status.explanation


def test_macos_probe_without_sandbox_exec_gives_none():
    if os.path.exists("/usr/bin/sandbox-exec"):
        pytest.skip("this machine has sandbox-exec")
    status = probe("darwin")
    assert status.kind == "none" and "/usr/bin/sandbox-exec not found" in status.explanation


def test_json_status_tells_setup_failure_from_failing_command(bwrap_status: SandboxStatus, tmp_path: Path):
    def run(policy: Policy, command: list[str]) -> tuple[int, int | None]:
        r, w = os.pipe()
        argv = bwrap_argv(
            policy, command, bwrap=bwrap_status.executable or "bwrap", as_root=os.geteuid() == 0, status_fd=w
        )
        proc = subprocess.run(argv, pass_fds=(w,), capture_output=True)
        os.close(w)
        with os.fdopen(r) as f:
            return proc.returncode, parse_exit_code(f.read())

    assert run(Policy(), ["true"]) == (0, 0)
    assert run(Policy(), ["sh", "-c", "exit 1"]) == (1, 1)
    # setup fails (writable path missing): bwrap exits 1 too, but never reports an exit code
    code, reported = run(Policy(writable=(str(tmp_path / "missing"),)), ["true"])
    assert code == 1 and reported is None


def test_parse_exit_code():
    assert parse_exit_code('{ "child-pid": 12 }\n{ "exit-code": 3 }\n') == 3
    assert parse_exit_code('{ "child-pid": 12 }\n') is None
    assert parse_exit_code("garbage\n") is None
