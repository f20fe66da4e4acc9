"""Profile generation as pure functions: bwrap / unshare argv (Linux), SBPL (macOS), none (Windows)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ama.sandbox import Policy, ProfileError, SandboxStatus, build_policy, wrap_command
from ama.sandbox.detect import probe
from ama.sandbox.profile import bwrap_argv, sandbox_exec_argv, sbpl_profile, sbpl_string, unshare_argv

GOLDEN = Path(__file__).with_name("golden")

# a worktree workspace: its .git is a pointer to a git dir inside the workspace's trees/main
BASH_POLICY = Policy(
    network="deny",
    writable=("/work/ws", "/tmp/ama-s1-x", "/home/u/.cache", "/home/u"),
    read_only=("/work/ws/.ama", "/work/ws/.git", "/work/ws/trees/main/.git"),
    hidden_dirs=("/home/u/.ssh", "/home/u/.aws"),
    hidden_files=("/home/u/.netrc", "/home/u/.local/share/ama/auth.json", "/work/ws/.env"),
    pinned=("/work/ws/trees", "/work/ws/trees/main"),
)


def golden(name: str) -> str:
    return (GOLDEN / name).read_text(encoding="utf-8")


def argv_lines(argv: list[str]) -> str:
    return "\n".join(argv) + "\n"


# ---------------------------------------------------------------------------- Linux: bwrap


def test_bwrap_argv_as_root_matches_golden():
    argv = bwrap_argv(
        BASH_POLICY,
        ["/bin/bash", "-c", "make"],
        bwrap="/usr/bin/bwrap",
        as_root=True,
        seccomp_fd=7,
        chdir="/work/ws",
    )
    assert argv_lines(argv) == golden("bwrap_bash_root.txt")


def test_bwrap_argv_unprivileged_matches_golden():
    argv = bwrap_argv(
        BASH_POLICY,
        ["/bin/bash", "-c", "make"],
        bwrap="/usr/bin/bwrap",
        as_root=False,
        seccomp_fd=7,
        chdir="/work/ws",
    )
    assert argv_lines(argv) == golden("bwrap_bash_user.txt")


def test_bwrap_root_gets_own_user_namespace_without_capabilities():
    root = bwrap_argv(Policy(), ["true"], as_root=True)
    user = bwrap_argv(Policy(), ["true"], as_root=False)
    assert root[root.index("--unshare-user") :][:7] == [
        "--unshare-user",
        "--uid",
        "0",
        "--gid",
        "0",
        "--cap-drop",
        "ALL",
    ]
    assert "--unshare-user" not in user and "--cap-drop" not in user  # bwrap drops them itself for users
    for argv in (root, user):
        for flag in ("--new-session", "--die-with-parent", "--unshare-pid"):
            assert flag in argv
        assert argv[argv.index("--proc") + 1] == "/proc"


def test_bwrap_mount_order_root_writable_readonly_hidden():
    argv = bwrap_argv(BASH_POLICY, ["true"])
    ops = [
        (argv[i], argv[i + 1]) for i in range(len(argv) - 1) if argv[i].startswith("--") and argv[i] != "--"
    ]
    order = [op for op, _ in ops if op in ("--ro-bind", "--bind", "--tmpfs")]
    # root read-only first, then every writable bind, then read-only sub-binds, then hidden
    assert order[0] == "--ro-bind" and ops[[o for o, _ in ops].index("--ro-bind")][1] == "/"
    last_bind = max(i for i, op in enumerate(order) if op == "--bind")
    first_sub_ro = order.index("--ro-bind", 1)
    assert last_bind < first_sub_ro < order.index("--tmpfs")
    binds = [argv[i + 1] for i, a in enumerate(argv) if a == "--bind"]
    # parents before children, the pinned parents after the workspace they sit in
    assert binds.index("/home/u") < binds.index("/home/u/.cache")
    assert binds.index("/work/ws") < binds.index("/work/ws/trees") < binds.index("/work/ws/trees/main")
    # hidden files are read as empty: /dev/null bound read-only over them
    assert argv[argv.index("/home/u/.netrc") - 2 : argv.index("/home/u/.netrc") + 1] == [
        "--ro-bind",
        "/dev/null",
        "/home/u/.netrc",
    ]
    assert argv[argv.index("--tmpfs") : argv.index("--tmpfs") + 4] == [
        "--tmpfs",
        "/home/u/.aws",
        "--remount-ro",
        "/home/u/.aws",
    ]


def test_bwrap_network_allow_keeps_the_network_namespace():
    assert "--unshare-net" in bwrap_argv(Policy(network="deny"), ["true"])
    assert "--unshare-net" not in bwrap_argv(Policy(network="allow"), ["true"])


def test_bwrap_status_fd_and_command_after_double_dash():
    argv = bwrap_argv(Policy(), ["echo", "--bind", "/", "/"], status_fd=9)
    assert argv[argv.index("--json-status-fd") + 1] == "9"
    assert argv[argv.index("--") + 1 :] == ["echo", "--bind", "/", "/"]
    assert "--seccomp" not in argv


def test_unshare_argv():
    assert unshare_argv(["node", "x.js"]) == ["unshare", "-r", "-n", "--", "node", "x.js"]
    assert unshare_argv(["true"], unshare="/usr/bin/unshare", network="allow") == [
        "/usr/bin/unshare",
        "-r",
        "--",
        "true",
    ]


def test_empty_command_refused():
    for fn in (
        lambda: bwrap_argv(Policy(), []),
        lambda: unshare_argv([]),
        lambda: sandbox_exec_argv(Policy(), []),
    ):
        with pytest.raises(ProfileError):
            fn()


# ---------------------------------------------------------------------------- macOS: SBPL


def test_sbpl_matches_the_seed_example():
    """The seed's example profile, plus the signal rules: only the same sandbox can be signalled."""
    text = sbpl_profile(Policy(network="deny", writable=("/work",)))
    assert text == golden("sbpl_seed_example.sb")
    assert text.endswith("(deny signal)\n(allow signal (target same-sandbox))\n")


def test_sbpl_bash_profile_matches_golden():
    assert sbpl_profile(BASH_POLICY) == golden("sbpl_bash.sb")


def test_sbpl_network_allow_drops_network_rules_only():
    text = sbpl_profile(Policy(network="allow", writable=("/work",)))
    assert "network" not in text and "dnssd" not in text
    assert "(deny file-write*)" in text and '(allow file-write* (subpath "/work"))' in text


def test_sbpl_later_rules_win_so_denies_come_after_allows():
    lines = sbpl_profile(BASH_POLICY).splitlines()
    allow = next(i for i, ln in enumerate(lines) if ln.startswith("(allow file-write* (subpath"))
    read_only = next(i for i, ln in enumerate(lines) if '(subpath "/work/ws/.git")' in ln)
    hidden = next(i for i, ln in enumerate(lines) if ln.startswith("(deny file-read* file-write*"))
    assert lines.index("(deny file-write*)") < allow < read_only < hidden
    assert lines[read_only].startswith("(deny file-write*")


def test_sbpl_quotes_backslash_and_double_quote():
    assert sbpl_string('/a"b\\c') == '"/a\\"b\\\\c"'
    text = sbpl_profile(Policy(writable=('/w/x"y',), hidden_files=("/h/a\\b",)))
    assert '(subpath "/w/x\\"y")' in text
    assert '(literal "/h/a\\\\b")' in text


@pytest.mark.parametrize("bad", ["/a\nb", "/a\tb", "/a\x00b", "/a\x1bb", "/a\x7fb", "/a\rb"])
def test_control_characters_refused_everywhere(bad):
    with pytest.raises(ProfileError, match="control character"):
        sbpl_string(bad)
    with pytest.raises(ProfileError, match="control character"):
        Policy(writable=(bad,))
    with pytest.raises(ProfileError, match="control character"):
        bwrap_argv(Policy(), ["true"], chdir=bad)


def test_relative_paths_refused():
    with pytest.raises(ProfileError, match="absolute"):
        Policy(writable=("work",))
    with pytest.raises(ProfileError, match="network"):
        Policy(network="maybe")


def test_sandbox_exec_argv_passes_profile_inline():
    argv = sandbox_exec_argv(Policy(writable=("/w",)), ["/bin/bash", "-c", "ls"])
    assert argv[:2] == ["/usr/bin/sandbox-exec", "-p"]
    assert argv[2] == sbpl_profile(Policy(writable=("/w",)))
    assert argv[3:] == ["/bin/bash", "-c", "ls"]


def test_symlinked_tmp_resolves_to_private_tmp_in_sbpl(tmp_path: Path):
    """macOS has /tmp -> /private/tmp; SBPL matches real paths, so policies hold realpaths."""
    (tmp_path / "private" / "tmp" / "ws").mkdir(parents=True)
    (tmp_path / "tmp").symlink_to(tmp_path / "private" / "tmp")
    real_tmp = str(tmp_path / "private" / "tmp")
    policy = build_policy(
        "sandbox-exec",
        writable=[str(tmp_path / "tmp"), str(tmp_path / "tmp" / "missing")],
        read_only=[str(tmp_path / "tmp" / "ws" / ".ama")],  # does not exist: still refused by path
        hidden=[str(tmp_path / "tmp" / "ws" / "creds")],
    )
    assert policy.writable == (real_tmp,)  # the missing writable directory is dropped
    assert policy.read_only == (f"{real_tmp}/ws/.ama",)
    assert policy.hidden_dirs == (f"{real_tmp}/ws/creds",)  # missing: subpath also refuses creating it
    text = sbpl_profile(policy)
    assert f'(allow file-write* (subpath "{real_tmp}"))' in text
    assert f'(deny file-write* (subpath "{real_tmp}/ws/.ama"))' in text
    assert str(tmp_path / "tmp") + '"' not in text


def test_build_policy_for_bwrap_keeps_only_existing_targets(tmp_path: Path):
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / ".git" / "config").write_text("")
    (tmp_path / "secret-dir").mkdir()
    (tmp_path / "secret-file").write_text("x")
    policy = build_policy(
        "bwrap",
        writable=[str(ws)],
        read_only=[str(ws / ".ama"), str(ws / ".git" / "config")],
        hidden=[str(tmp_path / "secret-dir"), str(tmp_path / "secret-file"), str(tmp_path / "absent")],
        pinned=[str(ws / ".git"), str(ws / "nothing")],
    )
    assert policy.read_only == (str(ws / ".git" / "config"),)
    assert policy.hidden_dirs == (str(tmp_path / "secret-dir"),)
    assert policy.hidden_files == (str(tmp_path / "secret-file"),)
    assert policy.pinned == (str(ws / ".git"),)


# ---------------------------------------------------------------------------- Windows and others


def test_windows_has_no_sandbox_and_commands_pass_through_unchanged():
    status = probe("win32")
    assert (status.kind, status.executable, status.isolates_network, status.restricts_writes) == (
        "none",
        None,
        False,
        False,
    )
    assert "Windows" in status.explanation
    wrapped = wrap_command(status, ["cmd", "/c", "dir"], Policy(), env={"A_TOKEN": "t", "X": "1"})
    assert wrapped.argv == ["cmd", "/c", "dir"] and not wrapped.sandboxed and wrapped.pass_fds == ()
    assert wrapped.env == {"A_TOKEN": "t", "X": "1"}  # unsandboxed: environment untouched


def test_unknown_platform_has_no_sandbox():
    status = probe("freebsd14")
    assert status.kind == "none" and "freebsd14" in status.explanation


def test_wrap_for_each_kind(tmp_path: Path):
    policy = Policy(writable=(str(tmp_path),))
    env = {"PATH": "/bin", "OPENAI_API_KEY": "sk"}
    mac = wrap_command(
        SandboxStatus("sandbox-exec", "/usr/bin/sandbox-exec", True, True, ""),
        ["ls"],
        policy,
        env=env,
        tmpdir="/t",
    )
    assert mac.argv[:3] == ["/usr/bin/sandbox-exec", "-p", sbpl_profile(policy)] and mac.argv[3:] == ["ls"]
    assert mac.sandboxed and mac.env == {"PATH": "/bin", "TMPDIR": "/t"}
    un = wrap_command(SandboxStatus("unshare", "/usr/bin/unshare", True, False, ""), ["ls"], policy, env=env)
    assert un.argv == ["/usr/bin/unshare", "-r", "-n", "--", "ls"] and un.sandboxed
    with wrap_command(
        SandboxStatus("bwrap", "/usr/bin/bwrap", True, True, ""), ["ls"], policy, env=env, cwd=str(tmp_path)
    ) as bw:
        assert bw.argv[0] == "/usr/bin/bwrap" and bw.argv[-2:] == ["--", "ls"]
        if bw.pass_fds:  # x86-64 / aarch64: the seccomp program travels in a pipe
            fd = bw.pass_fds[0]
            assert bw.argv[bw.argv.index("--seccomp") + 1] == str(fd)
            os.fstat(fd)
    if bw.pass_fds:
        with pytest.raises(OSError):
            os.fstat(bw.pass_fds[0])  # close() released it
