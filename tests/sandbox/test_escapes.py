"""Real escapes against the real sandbox, as root and as an unprivileged user.

Every command runs through runner.py exactly as the bash tool runs it.  Verdicts are
checked on the host (files on disk, connections a host server accepted, processes left
alive, secrets in the output), never from the sandboxed command's exit status.
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
from pathlib import Path

import pytest

from .conftest import Box, wait_until_gone

HINT_START = "[sandbox: this command ran in ama's OS sandbox (writes only in workspace/temp, no network)."


def marker() -> str:
    return secrets.token_hex(6)


# ---------------------------------------------------------------------------- writes


def test_writes_outside_the_workspace_fail(box: Box):
    m = marker()
    sibling = box.base / "sibling"
    sibling.mkdir()
    targets = [
        Path(f"/etc/ama-escape-{m}"),
        box.home / "escape",
        sibling / "escape",
        Path(f"/tmp/ama-escape-{m}"),
    ]
    try:
        cmd = (
            "; ".join(f"echo pwned > {t}" for t in targets)
            + f"; mkdir {box.home}/newdir; touch {box.home}/.bashrc"
        )
        result = box.run(cmd)
        for target in targets:
            assert not target.exists(), target
        assert not (box.home / "newdir").exists() and not (box.home / ".bashrc").exists()
        assert result["exit"] != 0 and result["hint"].startswith(HINT_START)
    finally:
        for target in targets:
            if target.exists():
                target.unlink()


def test_writes_inside_succeed(box: Box):
    extra = box.base / "extra"
    extra.mkdir()
    (box.home / ".cache").mkdir()
    cmd = (
        "echo a > f && mkdir -p sub/dir && echo b > sub/dir/g && echo c > $TMPDIR/t "
        f"&& echo d > {extra}/e && echo e > ~/.cache/h && echo done"
    )
    result = box.run(cmd, writable=[str(extra), "~/.cache"])
    assert (box.ws / "f").read_text() == "a\n"
    assert (box.ws / "sub" / "dir" / "g").read_text() == "b\n"
    assert (extra / "e").read_text() == "d\n"
    assert (box.home / ".cache" / "h").read_text() == "e\n"
    assert result["tmp_files"] == {"t": "c\n"}  # read on the host before the TMPDIR was removed
    assert os.path.basename(result["tmpdir"]).startswith("ama-test-") and result["tmpdir_removed"]
    assert result["exit"] == 0 and result["hint"] is None


def test_write_through_symlink_out_of_workspace_fails(box: Box):
    target = box.write(box.outside / "target.txt", "original\n")
    (box.ws / "link").symlink_to(target)
    (box.ws / "dirlink").symlink_to(box.outside)
    box.run("echo pwned > link; echo pwned >> link; echo x > dirlink/new; ln -s /etc/passwd dirlink/s")
    assert target.read_text() == "original\n"
    assert sorted(os.listdir(box.outside)) == ["target.txt"]


def test_hardlink_of_outside_file_fails(box: Box):
    target = box.write(box.outside / "target.txt", "original\n")
    box.run(f"ln {target} hl; echo pwned >> hl; ln /etc/hostname h2")
    assert target.read_text() == "original\n" and target.stat().st_nlink == 1
    assert (box.ws / "hl").stat().st_ino != target.stat().st_ino  # the append created a new file
    assert not (box.ws / "h2").exists()


# ---------------------------------------------------------------------------- git, .ama


def _git_repo(box: Box) -> tuple[Path, str]:
    git = box.ws / ".git"
    (git / "hooks").mkdir(parents=True)
    (git / "objects").mkdir()
    config = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
    box.write(git / "config", config)
    box.write(git / "HEAD", "ref: refs/heads/main\n")
    box.write(git / "hooks" / "pre-commit.sample", "#!/bin/sh\n")
    return git, config


def test_git_dir_is_read_only_as_a_whole(box: Box):
    git, config = _git_repo(box)
    cmd = (
        "echo evil > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; "
        "echo evil > .git/hooks/pre-commit.sample; rm -f .git/hooks/pre-commit.sample; "
        "printf '[core]\\n\\thooksPath = /tmp/evil\\n' >> .git/config; "
        "git config core.fsmonitor 'touch /tmp/pwned'; rm -f .git/config; mv .git/hooks .git/h2; rm -rf .git/hooks; "
        "echo x > .git/commondir; echo x > .git/objects/written; mkdir -p .git/info && echo x > .git/info/attributes; "
        "cat .git/HEAD"  # reading works
    )
    result = box.run(cmd)
    assert (git / "config").read_text() == config
    assert sorted(os.listdir(git / "hooks")) == ["pre-commit.sample"]
    assert (git / "hooks" / "pre-commit.sample").read_text() == "#!/bin/sh\n"
    assert sorted(os.listdir(git)) == ["HEAD", "config", "hooks", "objects"]
    assert os.listdir(git / "objects") == []
    assert "ref: refs/heads/main" in result["output"]
    assert "Read-only file system" in result["output"]


def test_git_dir_cannot_be_renamed_away_and_replaced(box: Box):
    git, config = _git_repo(box)
    inode = git.stat().st_ino
    cmd = (
        "mv .git .git-old; mkdir -p .git/hooks; echo evil > .git/hooks/pre-commit; "
        "rm -rf .git; mkdir .git; echo '[core] fsmonitor = evil' > .git/config"
    )
    result = box.run(cmd)
    assert git.stat().st_ino == inode and not (box.ws / ".git-old").exists()
    assert (git / "config").read_text() == config
    assert sorted(os.listdir(git / "hooks")) == ["pre-commit.sample"]
    assert "Device or resource busy" in result["output"] and result["hint"].startswith(HINT_START)


def test_ama_dir_is_read_only_even_when_missing(box: Box):
    box.run("mkdir -p .ama; echo '{\"hooks\": {}}' > .ama/config.json; mkdir .ama/hooks")
    assert (box.ws / ".ama").is_dir() and os.listdir(box.ws / ".ama") == []
    original = '{"model": "a/b"}\n'
    box.write(box.ws / ".ama" / "config.json", original)
    box.run("echo '{}' > .ama/config.json; rm -f .ama/config.json; mv .ama .ama-old; echo x > .ama/new")
    assert (box.ws / ".ama" / "config.json").read_text() == original
    assert os.listdir(box.ws / ".ama") == ["config.json"] and not (box.ws / ".ama-old").exists()


# ---------------------------------------------------------------------------- credentials


def _plant_credentials(box: Box, secret: str) -> list[Path]:
    files = [
        box.home / ".ssh" / "id_ed25519",
        box.home / ".ssh" / "id_rsa",
        box.home / ".gnupg" / "private-keys-v1.d" / "key.key",
        box.home / ".aws" / "credentials",
        box.home / ".kube" / "config",
        box.home / ".docker" / "config.json",
        box.home / ".config" / "gcloud" / "credentials.db",
        box.home / ".netrc",
        box.home / ".pgpass",
        box.home / ".git-credentials",
        box.ama_home / "auth.json",
    ]
    for path in files:
        box.write(path, f"{secret} {path.name}\n")
    return files


def test_credentials_read_as_empty(box: Box):
    secret, visible = f"SECRET-{marker()}", f"VISIBLE-{marker()}"
    files = _plant_credentials(box, secret)
    box.write(box.home / "notes.txt", visible + "\n")  # control: the rest of home is readable
    cmd = (
        " ; ".join(f"cat {p}" for p in files)
        + f" ; cat ~/notes.txt ; ls -la ~/.ssh ; grep -r {secret} ~ {box.ama_home}"
    )
    result = box.run(cmd)
    assert visible in result["output"]
    assert secret not in result["output"]
    assert "Permission denied" not in result["output"]  # hidden files read as empty, not refused
    for path in files:  # untouched on the host
        assert path.read_text() == f"{secret} {path.name}\n"


def test_symlinked_credential_dir_is_hidden_at_its_target(box: Box):
    secret = f"SECRET-{marker()}"
    vault = box.base / "vault" / "ssh"
    box.write(vault / "id_rsa", secret + "\n")
    (box.home / ".ssh").symlink_to(vault)
    result = box.run(f'cat ~/.ssh/id_rsa; cat {vault}/id_rsa; echo "entries=$(ls -A {vault} | wc -l)"')
    assert secret not in result["output"] and "entries=0" in result["output"]


def test_credential_variables_scrubbed_unless_passed(box: Box):
    api, gh, aws, keep = (f"V{marker()}" for _ in range(4))
    env = {"OPENAI_API_KEY": api, "GITHUB_TOKEN": gh, "AWS_SECRET_ACCESS_KEY": aws, "KEEP_ME": keep}
    result = box.run("env", env=env, env_allow=["GITHUB_TOKEN"])
    out = result["output"]
    assert keep in out and gh in out
    assert api not in out and aws not in out


# ---------------------------------------------------------------------------- network


class Listener:
    """A host-side server that counts what reached it."""

    def __init__(self, family: int, kind: int, address):
        self.sock = socket.socket(family, kind)
        self.sock.bind(address)
        if kind == socket.SOCK_STREAM:
            self.sock.listen(16)
        self.sock.setblocking(False)
        self.address = self.sock.getsockname()
        self.kind = kind

    def count(self) -> int:
        n = 0
        while True:
            try:
                if self.kind == socket.SOCK_STREAM:
                    conn, _ = self.sock.accept()
                    conn.close()
                else:
                    self.sock.recvfrom(1024)
            except (BlockingIOError, InterruptedError):
                return n
            n += 1

    def close(self) -> None:
        self.sock.close()


def test_tcp_to_host_loopback_refused(box: Box):
    server = Listener(socket.AF_INET, socket.SOCK_STREAM, ("127.0.0.1", 0))
    port = server.address[1]
    try:
        connect = (
            f"(exec 3<>/dev/tcp/127.0.0.1/{port}) ; "
            f'"$PY" -c "import socket; socket.create_connection((\'127.0.0.1\', {port}), timeout=3)"'
        )
        result = box.run(connect)
        assert server.count() == 0
        assert result["hint"].startswith(HINT_START)
        # control: the same command with the network allowed does reach the server
        box.run(connect, call_network="allow")
        assert server.count() >= 1
    finally:
        server.close()


def test_dns_and_udp_do_not_leave(box: Box):
    server = Listener(socket.AF_INET, socket.SOCK_DGRAM, ("127.0.0.1", 0))
    port = server.address[1]
    try:
        send = f"\"$PY\" -c \"import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'q', ('127.0.0.1', {port}))\""
        result = box.run(f"getent hosts example.com; echo getent=$?; {send}")
        assert server.count() == 0
        assert "getent=0" not in result["output"]  # name resolution failed
        box.run(send, call_network="allow")  # control: the datagram arrives when the network is allowed
        assert server.count() == 1
    finally:
        server.close()


def test_unix_socket_outside_refused_even_with_network(box: Box):
    """An ssh-agent style socket on the host is reachable through the read-only root: seccomp refuses AF_UNIX."""
    path = box.outside / "agent.sock"
    server = Listener(socket.AF_UNIX, socket.SOCK_STREAM, str(path))
    os.chmod(path, 0o777)
    box.own()
    try:
        code = f"import socket; s = socket.socket(socket.AF_UNIX); s.connect('{path}')"
        connect = f'"$PY" -c "{code}"'
        for network in ("deny", "allow"):
            result = box.run(connect, call_network=network, env={"SSH_AUTH_SOCK": str(path)})
            assert server.count() == 0, network
            assert "PermissionError" in result["output"]
        # control: the same user outside the sandbox connects fine
        subprocess.run(box.as_user([box.python, "-c", code]), check=True)
        assert server.count() == 1
    finally:
        server.close()


def test_seccomp_filter_mechanics(box: Box):
    """AF_UNIX socket() and io_uring refused with EPERM; socketpair and inet sockets still work."""
    script = (
        "import ctypes, errno, socket\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "r = libc.syscall(425, 1, None)\n"
        "print('io_uring', r, errno.errorcode.get(ctypes.get_errno()))\n"
        "try:\n socket.socket(socket.AF_UNIX); print('unix ok')\n"
        "except OSError as e: print('unix', errno.errorcode[e.errno])\n"
        "a, b = socket.socketpair(); a.send(b'x'); print('socketpair', b.recv(1))\n"
        "socket.socket(socket.AF_INET, socket.SOCK_STREAM); print('inet ok')\n"
    )
    box.write(box.ws / "probe.py", script)
    out = box.run('"$PY" probe.py')["output"]
    if os.uname().machine not in ("x86_64", "aarch64"):
        pytest.skip("no seccomp filter on this architecture (documented)")
    assert "io_uring -1 EPERM" in out
    assert "unix EPERM" in out
    assert "socketpair b'x'" in out and "inet ok" in out


# ---------------------------------------------------------------------------- privileges and processes


def test_mount_tricks_fail(box: Box):
    secret = f"SECRET-{marker()}"
    box.write(box.home / ".ssh" / "id_ed25519", secret + "\n")
    git, _config = _git_repo(box)
    out = box.outside
    nested = (
        "import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); "
        f"print('umount', libc.umount2(b'{box.home}/.ssh', 2), ctypes.get_errno()); "
        "print(open(os.path.expanduser('~/.ssh/id_ed25519')).read())"
    )
    cmd = (
        f"umount -l ~/.ssh; umount -l {git}/hooks; mount -o remount,rw /; mount -o remount,rw,bind {git}/hooks; "
        f"mount --bind {box.ws} {out}; mount -t tmpfs none {out}; echo x > {out}/m; "
        f"echo evil > {git}/hooks/pre-commit; cat ~/.ssh/id_ed25519; "
        f'unshare -Um "$PY" -c "{nested}"; '
        f"unshare -Urm sh -c 'umount -l ~/.ssh; cat ~/.ssh/id_ed25519; mount -o remount,rw /; echo x > {out}/n'"
    )
    result = box.run(cmd)
    assert secret not in result["output"]
    assert os.listdir(out) == [] and not (git / "hooks" / "pre-commit").exists()


def test_agent_unreachable_through_proc_nsenter_or_signals(box: Box):
    m = marker()
    victim = subprocess.Popen(box.as_user(["env", f"VICTIM_SECRET={m}", "sleep", "300"]))
    try:
        v = victim.pid
        cmd = (
            f"echo pwned > /proc/{v}/root{box.outside}/via-proc-root; ls /proc/{v}/root/ >/dev/null && echo LISTED; "
            f"cat /proc/{v}/environ; "
            f"echo pwned > /proc/$AMA_TEST_AGENT_PID/root{box.outside}/via-agent-root; cat /proc/$AMA_TEST_AGENT_PID/environ; "
            f"nsenter -t {v} -m -- sh -c 'echo pwned > {box.outside}/via-nsenter'; "
            f"nsenter -t {v} -a -- sh -c 'echo pwned > {box.outside}/via-nsenter-all'; "
            f"kill -9 {v}; kill -9 $AMA_TEST_AGENT_PID; kill -STOP $AMA_TEST_AGENT_PID"
        )
        result = box.run(cmd)  # run() asserts the runner (the agent) survived and reported
        assert victim.poll() is None  # the host process is alive
        assert os.listdir(box.outside) == []
        assert m not in result["output"] and "LISTED" not in result["output"]
    finally:
        victim.kill()
        victim.wait()


def test_background_and_setsid_children_die_when_the_call_is_killed(box: Box):
    m = f"{secrets.randbelow(10**6)}"
    sleeps = [f"400{i}.{m}" for i in range(5)]
    late = box.ws / "late"
    cmd = (
        f"(sleep {sleeps[0]} &) ; setsid sleep {sleeps[1]} & nohup sleep {sleeps[2]} >/dev/null 2>&1 & "
        f"setsid sh -c 'sleep {sleeps[3]}; echo late > {late}' & "
        f"touch ready; sleep {sleeps[4]}"
    )
    result = box.run(cmd, kill_when=str(box.ws / "ready"))
    assert result["killed"]
    for s in sleeps:
        assert wait_until_gone(f"sleep {s}") == [], s
    assert not late.exists()


def test_background_children_end_with_the_call(box: Box):
    m = f"{secrets.randbelow(10**6)}"
    result = box.run(f"(sleep 5001.{m} &) ; setsid sleep 5002.{m} & echo started")
    assert "started" in result["output"] and not result["killed"]
    assert wait_until_gone(f"sleep 5001.{m}") == [] and wait_until_gone(f"sleep 5002.{m}") == []


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except OSError:
        return False


def test_control_unsandboxed_setsid_child_survives_group_kill():
    """Shows the test above can fail: without the pid namespace a setsid child outlives killpg.

    No sleeps as synchronisation: the child writes its pid to a pipe only after ``setsid``
    made it leave the process group, and the test blocks on reading it.
    """
    import signal

    m = f"{secrets.randbelow(10**6)}"
    # stdout is a pipe; every writer but the setsid child lets go of it, so EOF means it died
    script = f"setsid sh -c 'echo $$; exec sleep 6001.{m} >/dev/null' & exec sleep 6002.{m} >/dev/null"
    proc = subprocess.Popen(["sh", "-c", script], stdout=subprocess.PIPE, start_new_session=True)
    child = None
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # blocks until the child has left the group
        proc.stdout.close()
        child = int(line)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        assert proc.returncode == -signal.SIGKILL
        assert _alive(child)  # the group kill did not reach it
    finally:
        if child is not None and _alive(child):
            os.kill(child, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# ---------------------------------------------------------------------------- documented limitations


def test_documented_limitations_hold(box: Box):
    """docs/sandbox.md, "Known limitations": these succeed by design or are not covered."""
    git, config = _git_repo(box)
    nested = box.ws / "vendor" / "lib" / ".git" / "hooks"
    nested.mkdir(parents=True)
    box.write(box.ws / "notes.txt", "TOKEN=workspace-secret\n")
    cmd = (
        "echo 'all:; touch /tmp/x' > Makefile; "  # build files run later, outside the sandbox
        "echo evil > vendor/lib/.git/hooks/pre-commit; "  # nested repositories are not protected
        "cat notes.txt"  # reads inside the workspace are not restricted (beyond secret files)
    )
    result = box.run(cmd)
    assert (box.ws / "Makefile").exists()
    assert (nested / "pre-commit").read_text() == "evil\n"
    assert "workspace-secret" in result["output"]
    assert (git / "config").read_text() == config


# ---------------------------------------------------------------------------- secrets in the workspace


def test_workspace_secret_files_are_hidden_unless_allowed(box: Box):
    secret = f"SECRET-{marker()}"
    files = {
        ".env": f"TOKEN={secret}\n",
        "api/.env.local": f"TOKEN={secret}-local\n",
        ".aws/credentials": f"aws_secret_access_key={secret}\n",
        "deploy/.netrc": f"machine x password {secret}\n",
    }
    for rel, text in files.items():
        box.write(box.ws / rel, text)
    box.write(box.ws / ".env.example", "TOKEN=changeme\n")  # a template: readable
    box.write(box.ws / "venv" / ".env" / "bin" / "activate", "# a virtualenv\n")
    cmd = (
        "cat .env api/.env.local deploy/.netrc .env.example venv/.env/bin/activate; "
        "grep -r TOKEN . ; cat .aws/credentials"
    )
    result = box.run(cmd)
    out = result["output"]
    assert secret not in out
    assert "TOKEN=changeme" in out and "# a virtualenv" in out
    # the failing read names a hidden path: the hint says the sandbox hid it
    assert result["exit"] != 0, out
    assert result["hint"].startswith("[sandbox: .aws is hidden inside ama's OS sandbox"), out
    for rel, text in files.items():  # untouched on the host
        assert (box.ws / rel).read_text() == text
    # sandbox.allowSecrets leaves the named ones readable
    allowed = box.run("cat api/.env.local .env", allow_secrets=[".env.local"])["output"]
    assert f"TOKEN={secret}-local" in allowed and f"TOKEN={secret}\n" not in allowed


def test_secret_created_between_calls_is_hidden_from_the_next(box: Box):
    secret = f"SECRET-{marker()}"
    assert box.run("cat .env; echo rc=$?")["exit"] == 0
    box.write(box.ws / "svc" / ".env.production", secret + "\n")
    assert secret not in box.run("cat svc/.env.production")["output"]


# ---------------------------------------------------------------------------- process limit

_FORKER = """\
import errno, os
r, w = os.pipe()
n, err = 0, None
for _ in range(300):  # bounded: never more than 300 children
    try:
        pid = os.fork()
    except OSError as e:
        err = errno.errorcode.get(e.errno)
        break
    if pid == 0:
        os.close(w)
        os.read(r, 1)  # wait until the parent is done forking
        os._exit(0)
    n += 1
os.close(w)
while True:
    try:
        os.wait()
    except ChildProcessError:
        break
print("forked", n, "error", err)
"""


def test_process_limit_stops_a_fork_bomb_inside_the_sandbox(box: Box):
    """A bounded fork bomb, only ever inside bwrap: capped by sandbox.maxProcesses."""
    box.write(box.ws / "forker.py", _FORKER)
    capped = box.run('"$PY" forker.py', max_processes=64)["output"]
    n = int(capped.split()[capped.split().index("forked") + 1])
    assert 32 <= n < 64 and "error EAGAIN" in capped, capped
    # the default (1024) leaves room for ordinary parallel work: all 300 children start
    assert "forked 300 error None" in box.run('"$PY" forker.py')["output"]
