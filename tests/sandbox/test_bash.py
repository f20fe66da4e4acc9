"""The bash sandbox settings: when it is active, the per-call policy table, env scrubbing, the hint."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ama.config.loader import load_config
from ama.sandbox import SandboxError, SandboxStatus, make_bash_sandbox, scrub_env
from ama.sandbox.bash import CREDENTIAL_PATHS, DESCRIPTION

BWRAP = SandboxStatus("bwrap", "/usr/bin/bwrap", True, True, "test")
SEATBELT = SandboxStatus("sandbox-exec", "/usr/bin/sandbox-exec", True, True, "test")
UNSHARE = SandboxStatus("unshare", "/usr/bin/unshare", True, False, "test")
NONE = SandboxStatus("none", None, False, False, "test")
ON = {"sandbox.bash": "auto"}

SEED_SUFFIX = (
    "Runs in an OS sandbox (writes only in workspace/temp, no network); sandbox:false needs approval."
)
SEED_HINT = (
    "[sandbox: this command ran in ama's OS sandbox (writes only in workspace/temp, no network). If it failed "
    "because of that, rerun it with sandbox:false, which needs the user's approval.]"
)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    d = tmp_path / "ws"
    d.mkdir()
    return d


def make(ws: Path, config=ON, status=BWRAP, **kw):
    sandbox = make_bash_sandbox(config, cwd=str(ws), data_dir=str(ws.parent / "data"), status=status, **kw)
    return sandbox


# ---------------------------------------------------------------------------- when active


def test_defaults_bash_off_means_inactive_and_byte_identical_tool(ws: Path):
    sandbox = make(ws, config={})
    assert not sandbox.active and not sandbox.isolates_network
    assert sandbox.description_suffix == "" and sandbox.tmpdir is None
    wrapped = sandbox.wrap("echo hi", cwd=str(ws))
    assert wrapped.argv == [sandbox.shell, "-c", "echo hi"] and not wrapped.sandboxed
    assert wrapped.env == dict(os.environ)
    assert sandbox.hint("Permission denied", 1) is None


@pytest.mark.parametrize("status", [BWRAP, SEATBELT])
def test_active_with_a_sandbox_that_restricts_writes(ws: Path, status: SandboxStatus):
    sandbox = make(ws, status=status)
    assert sandbox.active and sandbox.isolates_network
    assert sandbox.description_suffix == SEED_SUFFIX == DESCRIPTION["deny"]
    sandbox.close()


@pytest.mark.parametrize("status", [UNSHARE, NONE])
def test_inactive_without_write_restriction(ws: Path, status: SandboxStatus):
    sandbox = make(ws, status=status)
    assert not sandbox.active and sandbox.description_suffix == ""


def test_network_allow_is_active_but_not_network_isolated(ws: Path):
    sandbox = make(ws, config={"sandbox.bash": "auto", "sandbox.network": "allow"})
    assert sandbox.active and not sandbox.isolates_network
    assert (
        sandbox.description_suffix
        == "Runs in an OS sandbox (writes only in workspace/temp); sandbox:false needs approval."
    )
    sandbox.close()


def test_off_switches_win(ws: Path, monkeypatch: pytest.MonkeyPatch):
    assert not make(ws, config={"sandbox.bash": "auto", "sandbox.enabled": "off"}).active
    monkeypatch.setenv("AMA_SANDBOX", "off")
    sandbox = make(ws)  # even with a status saying bwrap works
    assert not sandbox.active and "AMA_SANDBOX=off" in sandbox.status.explanation


def test_nested_mapping_and_bad_values(ws: Path):
    sandbox = make(ws, config={"sandbox": {"bash": "auto", "network": "sometimes", "writable": "~/x"}})
    assert sandbox.active and sandbox.network == "deny"
    assert any("sandbox.network" in w for w in sandbox.warnings)
    assert any("sandbox.writable must be a list" in w for w in sandbox.warnings)
    sandbox.close()


def test_project_config_may_only_tighten_network(ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    ama_home = tmp_path / "ama-home"
    ama_home.mkdir()
    monkeypatch.setenv("AMA_HOME", str(ama_home))
    cache = tmp_path / "cache"
    cache.mkdir()
    (ama_home / "config.json").write_text(
        json.dumps({"sandbox": {"network": "allow", "writable": [str(cache)]}})
    )
    (ws / ".ama").mkdir()
    project = {"sandbox": {"network": "deny", "bash": "auto", "enabled": "off", "writable": ["/"]}}
    (ws / ".ama" / "config.json").write_text(json.dumps(project))
    cfg = load_config(ws)
    sandbox = make_bash_sandbox(cfg, cwd=str(ws), data_dir=str(ama_home), status=BWRAP)
    # the project tightened network to deny; it could neither turn bash on nor add "/" as writable
    assert not sandbox.active and sandbox.network == "deny"
    assert sum("a project may not set" in w for w in cfg.warnings) == 3
    user_only = make_bash_sandbox(
        {**cfg.values, "sandbox.bash": "auto"}, cwd=str(ws), data_dir=str(ama_home), status=BWRAP
    )
    assert user_only.writable == (str(cache),) and user_only.network == "deny"
    user_only.close()


# ---------------------------------------------------------------------------- per-call policy


def test_policy_table(ws: Path, tmp_path: Path, isolated_home: Path):
    home = isolated_home
    for rel in CREDENTIAL_PATHS:
        p = home / rel
        if rel in (".ssh", ".gnupg", ".aws", ".kube", ".config/gcloud"):
            p.mkdir(parents=True)
        else:
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text("secret")
    data = tmp_path / "data"
    data.mkdir()
    (data / "auth.json").write_text("{}")
    (ws / ".git").mkdir()
    (ws / ".git" / "config").write_text("[core]\n")
    (home / ".npm").mkdir()
    out = tmp_path / "out"
    out.mkdir()
    config = {
        "sandbox.bash": "auto",
        "sandbox.writable": ["~/.npm", "~/.missing", "relative/dir", str(tmp_path / "out")],
    }
    sandbox = make(ws, config=config, output_dirs=[str(out)])
    try:
        assert sandbox.warnings == [
            "sandbox.writable: relative path 'relative/dir' ignored (use an absolute path or ~/...)"
        ]
        policy = sandbox.policy()
        assert policy.network == "deny"
        assert set(policy.writable) == {
            str(ws),
            sandbox.tmpdir,
            str(home / ".npm"),
            str(out),
        }  # ~/.missing dropped
        assert set(policy.read_only) == {str(ws / ".ama"), str(ws / ".git")}  # the whole git dir
        assert policy.pinned == ()  # both are mount points themselves, directly in the workspace
        assert set(policy.hidden_dirs) == {
            str(home / d) for d in (".ssh", ".gnupg", ".aws", ".kube", ".config/gcloud")
        }
        files = {".docker/config.json", ".netrc", ".pgpass", ".git-credentials"}
        assert set(policy.hidden_files) == {str(home / f) for f in files} | {str(data / "auth.json")}
        # a missing .ama/ was created (empty) so that it can be mounted read-only
        assert (ws / ".ama").is_dir() and list((ws / ".ama").iterdir()) == []
        assert sandbox.policy(network="allow").network == "allow"
        extra = tmp_path / "extra"
        extra.mkdir()
        assert str(extra) in sandbox.policy(extra_writable=[str(extra)]).writable
        with pytest.raises(SandboxError, match="absolute"):
            sandbox.policy(extra_writable=["rel"])
    finally:
        sandbox.close()
    assert not os.path.exists(sandbox.tmpdir)  # close() removed the private TMPDIR


def test_private_tmpdir_per_session_replaces_shared_tmp(ws: Path):
    a, b = make(ws, session_id="s-1/../x"), make(ws, session_id="s-2")
    try:
        assert a.tmpdir != b.tmpdir and os.path.isdir(a.tmpdir) and os.stat(a.tmpdir).st_mode & 0o777 == 0o700
        assert os.path.basename(a.tmpdir).startswith("ama-s-1x-")  # the id is sanitized
        policy = a.policy()
        assert "/tmp" not in policy.writable and a.tmpdir in policy.writable
        wrapped = a.wrap("true", cwd=str(ws))
        wrapped.close()
        assert wrapped.env["TMPDIR"] == a.tmpdir
    finally:
        a.close()
        b.close()


def test_symlinked_credentials_are_hidden_by_realpath(ws: Path, isolated_home: Path, tmp_path: Path):
    vault = tmp_path / "vault" / "ssh"
    vault.mkdir(parents=True)
    (isolated_home / ".ssh").symlink_to(vault)
    sandbox = make(ws)
    try:
        assert str(vault) in sandbox.policy().hidden_dirs
    finally:
        sandbox.close()


def test_workspace_inside_a_credential_dir_is_not_hidden(isolated_home: Path, tmp_path: Path):
    ws = isolated_home / ".ssh" / "project"
    ws.mkdir(parents=True)
    sandbox = make_bash_sandbox(ON, cwd=str(ws), data_dir=str(tmp_path), status=BWRAP)
    try:
        assert str(isolated_home / ".ssh") not in sandbox.policy().hidden_dirs
    finally:
        sandbox.close()


def test_workspace_at_root_or_home_warns(isolated_home: Path, tmp_path: Path):
    sandbox = make_bash_sandbox(ON, cwd=str(isolated_home), data_dir=str(tmp_path), status=BWRAP)
    sandbox.close()
    assert any("write everywhere below it" in w for w in sandbox.warnings)


def test_sandbox_false_runs_unwrapped_with_full_env(ws: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    sandbox = make(ws)
    try:
        wrapped = sandbox.wrap("ls", cwd=str(ws), sandbox=False)
        assert wrapped.argv == [sandbox.shell, "-c", "ls"] and not wrapped.sandboxed
        assert wrapped.env["OPENAI_API_KEY"] == "sk-test"
    finally:
        sandbox.close()


def test_control_character_in_workspace_refused(tmp_path: Path):
    ws = tmp_path / "bad\nname"
    ws.mkdir()
    sandbox = make_bash_sandbox(ON, cwd=str(ws), data_dir=str(tmp_path), status=BWRAP)
    try:
        with pytest.raises(SandboxError, match="control character"):
            sandbox.wrap("true", cwd=str(ws))
    finally:
        sandbox.close()


# ---------------------------------------------------------------------------- environment


def test_credentials_scrubbed_from_environment():
    env = {
        "PATH": "/bin",
        "HOME": "/h",
        "OPENAI_API_KEY": "1",
        "ANTHROPIC_API_KEY": "2",
        "GITHUB_TOKEN": "3",
        "NPM_TOKEN": "4",
        "CLIENT_SECRET": "5",
        "AWS_ACCESS_KEY_ID": "6",
        "AWS_PROFILE": "7",
        "AMA_API_KEY": "8",
        "AMA_HOME": "/a",
        "SSH_AUTH_SOCK": "/tmp/agent",
        "TOKENIZERS_PARALLELISM": "false",
        "STRIPE_SECRET_KEY": "9",
        "DB_PASSWORD": "10",
    }
    assert scrub_env(env) == {
        "PATH": "/bin",
        "HOME": "/h",
        "AMA_HOME": "/a",
        "SSH_AUTH_SOCK": "/tmp/agent",
        "TOKENIZERS_PARALLELISM": "false",
    }
    kept = scrub_env(env, ["GITHUB_TOKEN", "AWS_*"])
    assert kept["GITHUB_TOKEN"] == "3" and kept["AWS_PROFILE"] == "7" and "NPM_TOKEN" not in kept
    # provider key variables with unusual names are scrubbed when named; allow still wins
    assert "TOKENIZERS_PARALLELISM" not in scrub_env(env, deny=["TOKENIZERS_*"])
    assert scrub_env(env, allow=["HOME"], deny=["HOME"])["HOME"] == "/h"


def test_secret_env_names_are_scrubbed(ws: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENROUTER_CREDENTIAL", "or")
    sandbox = make(ws, secret_env=["OPENROUTER_CREDENTIAL"])
    try:
        with sandbox.wrap("env", cwd=str(ws)) as wrapped:
            assert "OPENROUTER_CREDENTIAL" not in wrapped.env
    finally:
        sandbox.close()


def test_seatbelt_refuses_creation_by_path_so_nothing_is_created(ws: Path):
    (ws / ".git").mkdir()
    sandbox = make(ws, status=SEATBELT)
    try:
        policy = sandbox.policy()
        assert str(ws / ".ama") in policy.read_only and str(ws / ".git") in policy.read_only
        assert not (ws / ".ama").exists() and not (ws / ".git" / "hooks").exists()
        assert policy.pinned == ()
    finally:
        sandbox.close()


def test_sandbox_env_setting_passes_named_variables(ws: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("GITHUB_TOKEN", "ghp")
    monkeypatch.setenv("NPM_TOKEN", "npm")
    sandbox = make(ws, config={"sandbox.bash": "auto", "sandbox.env": ["GITHUB_TOKEN"]})
    try:
        with sandbox.wrap("env", cwd=str(ws)) as wrapped:
            assert wrapped.env["GITHUB_TOKEN"] == "ghp" and "NPM_TOKEN" not in wrapped.env
    finally:
        sandbox.close()


# ---------------------------------------------------------------------------- denial hint


@pytest.mark.parametrize(
    "output",
    [
        "touch: cannot touch '/etc/x': Read-only file system",
        "mkdir: cannot create directory '/root/x': Permission denied",
        "Error: EACCES: permission denied, open '/home/u/.npm/_cacache'",
        "OSError: [Errno 1] Operation not permitted",
        "npm ERR! code EPERM",
        "curl: (6) Could not resolve host: example.com",
        "npm ERR! getaddrinfo ENOTFOUND registry.npmjs.org",
        "Error: connect ECONNREFUSED 127.0.0.1:5432",
        "curl: (7) Failed to connect to 1.1.1.1 port 443 after 0 ms: Couldn't connect to server",
        "mv: cannot move '.git' to 'old': Device or resource busy",
        "dial tcp 1.1.1.1:443: socket: operation not permitted",
        "PermissionError: [Errno 13] permission denied",
        "READ-ONLY FILE SYSTEM",
    ],
)
def test_hint_on_denial_like_failures(ws: Path, output: str):
    sandbox = make(ws)
    try:
        assert sandbox.hint(output, 1) == SEED_HINT
        assert sandbox.hint(output, 0) is None  # success: no hint
    finally:
        sandbox.close()


def test_hint_names_a_hidden_path(ws: Path, isolated_home: Path):
    (isolated_home / ".ssh").mkdir()
    (ws / ".env").write_text("TOKEN=x\n")
    (ws / "api").mkdir()
    (ws / "api" / ".env.local").write_text("TOKEN=y\n")
    sandbox = make(ws)
    try:
        policy = sandbox.policy()
        assert str(ws / ".env") in policy.hidden_files and str(ws / "api" / ".env.local") in policy.hidden_files
        home_ssh = f"cat: {isolated_home}/.ssh/id_rsa: No such file or directory"
        assert sandbox.hint(home_ssh, 1) == (
            f"[sandbox: {isolated_home}/.ssh is hidden inside ama's OS sandbox (secrets read as empty or "
            "missing there). If the command needs it, rerun it with sandbox:false, which needs the user's approval.]"
        )
        assert sandbox.hint("error: api/.env.local: missing DATABASE_URL", 1).startswith("[sandbox: api/.env.local is hidden")
        assert sandbox.hint("KeyError: TOKEN (read from .env)", 1).startswith("[sandbox: .env is hidden")
        # near misses: other names, and success
        assert sandbox.hint("cat: .env.example: No such file or directory", 1) is None
        assert sandbox.hint("cat: notes/.envrc: No such file or directory", 1) is None
        assert sandbox.hint(home_ssh, 0) is None
    finally:
        sandbox.close()


def test_allow_secrets_and_templates_stay_readable(ws: Path):
    for name in (".env", ".env.test", ".env.example"):
        (ws / name).write_text("x\n")
    sandbox = make(ws, config={"sandbox.bash": "auto", "sandbox.allowSecrets": [".env.test"]})
    try:
        assert sandbox.policy().hidden_files == (str(ws / ".env"),)
    finally:
        sandbox.close()


def test_no_hint_for_unrelated_failures_or_network_markers_when_network_allowed(ws: Path):
    sandbox = make(ws, config={"sandbox.bash": "auto", "sandbox.network": "allow"})
    try:
        assert sandbox.hint("make: *** [all] Error 2", 2) is None
        assert sandbox.hint("curl: (6) Could not resolve host: example.com", 6) is None
        assert sandbox.hint("Read-only file system", 1) == (
            "[sandbox: this command ran in ama's OS sandbox (writes only in workspace/temp). If it failed "
            "because of that, rerun it with sandbox:false, which needs the user's approval.]"
        )
    finally:
        sandbox.close()


# ---------------------------------------------------------------------------- git and macOS


def test_bwrap_git_placeholder_and_worktree_pointers(ws: Path, tmp_path: Path):
    sandbox = make(ws)
    try:
        policy = sandbox.policy()  # no .git yet: an empty placeholder, read-only
        assert (ws / ".git").is_dir() and list((ws / ".git").iterdir()) == []
        assert str(ws / ".git") in policy.read_only
        # a worktree whose git dir (and common dir) lie inside the workspace
        (ws / ".git").rmdir()
        common = ws / "store" / "main.git"
        gitdir = common / "worktrees" / "ws"
        gitdir.mkdir(parents=True)
        (gitdir / "commondir").write_text("../..\n")
        (ws / ".git").write_text(f"gitdir: {gitdir}\n")
        policy = sandbox.policy()
        assert {str(ws / ".git"), str(common)} <= set(policy.read_only)
        assert policy.pinned == (str(ws / "store"),)  # its parent cannot be renamed away
    finally:
        sandbox.close()


def test_seatbelt_profile_protects_missing_git_renames_and_signals(ws: Path):
    from ama.sandbox.profile import sbpl_profile

    (ws / ".env").write_text("TOKEN=x\n")
    sandbox = make(ws, status=SEATBELT)
    try:
        policy = sandbox.policy()
        assert not (ws / ".git").exists()  # SBPL refuses creating it: no placeholder on disk
        text = sbpl_profile(policy)
        lines = text.splitlines()
        deny_write = next(ln for ln in lines if ln.startswith("(deny file-write* (subpath"))
        assert f'(subpath "{ws}/.git")' in deny_write and f'(subpath "{ws}/.ama")' in deny_write
        assert f'(literal "{ws}/.env")' in next(ln for ln in lines if ln.startswith("(deny file-read*"))
        unlink = next(ln for ln in lines if ln.startswith("(deny file-write-unlink"))
        for path in (ws / ".git", ws, ws.parent):  # .git and its parents cannot be renamed
            assert f'(literal "{path}")' in unlink
        assert lines[-2:] == ["(deny signal)", "(allow signal (target same-sandbox))"]
        allow = lines.index(next(ln for ln in lines if ln.startswith("(allow file-write* (subpath")))
        assert allow < lines.index(deny_write) < lines.index(unlink)
    finally:
        sandbox.close()


def test_process_limit_settings_and_launcher(ws: Path):
    import resource

    from ama.sandbox import limits

    assert limits.nproc_argv(["true"], 0) == ["true"]  # 0: no limit, no launcher
    argv = limits.nproc_argv(["/bin/sh", "-c", "make"], 512, bash="/bin/bash")
    assert argv[:2] == ["/bin/bash", "-c"] and "ulimit -u 512 " in argv[2]
    assert argv[3:] == ["ama-sandbox", "/bin/sh", "-c", "make"]
    hard = resource.getrlimit(resource.RLIMIT_NPROC)[1]
    if hard != resource.RLIM_INFINITY:  # never above the hard limit ama runs under: it could not be set
        assert limits.effective_limit(hard + 10) == hard
    sandbox = make(ws, config={"sandbox.bash": "auto", "sandbox.maxProcesses": -3})
    try:
        assert sandbox.max_processes == 1024
        assert any("sandbox.maxProcesses must be a whole number" in w for w in sandbox.warnings)
    finally:
        sandbox.close()


def test_project_may_only_lower_the_process_limit(ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    ama_home = tmp_path / "ama-home"
    ama_home.mkdir()
    monkeypatch.setenv("AMA_HOME", str(ama_home))
    (ws / ".ama").mkdir()
    for value, expected in ((256, 256), (0, 1024), (4096, 1024)):
        (ws / ".ama" / "config.json").write_text(json.dumps({"sandbox": {"maxProcesses": value}}))
        assert load_config(ws).get("sandbox.maxProcesses") == expected, value
