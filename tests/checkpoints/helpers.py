"""Builders for the checkpoint tests: a real session file, a tracker, ama-style writes."""

from __future__ import annotations

import hashlib
import os
import subprocess
import time
from pathlib import Path

from ama.checkpoints import CheckpointTracker
from ama.messages import UserMessage
from ama.session.store import Session

OLD = time.time_ns() - 3600 * 10**9  # an mtime old enough to be trusted by the fast path


def turn(session: Session, tracker: CheckpointTracker, text: str = "go") -> str:
    """A new-turn user message followed by its checkpoint, as the agent does it."""
    uid = session.append_message(UserMessage(content=text, timestamp=0)).id
    tracker.checkpoint(uid)
    return uid


def ama_write(tracker: CheckpointTracker, path: str | Path, data: bytes | str) -> None:
    """What edit/write do: before_write, write in place (parents created), after_write."""
    path = os.fspath(path)
    raw = data.encode() if isinstance(data, str) else data
    tracker.before_write(path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(raw)
    tracker.after_write(path, raw)


def put(path: str | Path, data: bytes | str, *, mtime_ns: int | None = None) -> None:
    """A change made outside ama (bash, the user, a formatter)."""
    path = os.fspath(path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)
    if mtime_ns is not None:
        os.utime(path, ns=(mtime_ns, mtime_ns))


def read(path: str | Path) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def tree(root: str | Path, *, skip: tuple[str, ...] = (".git",)) -> dict[str, bytes]:
    """relative path -> bytes of every regular file under root (``skip`` dirs left out)."""
    out = {}
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in skip)
        for name in files:
            p = os.path.join(d, name)
            if os.path.isfile(p) and not os.path.islink(p):
                with open(p, "rb") as f:
                    out[os.path.relpath(p, root)] = f.read()
    return out


def dir_fingerprint(root: str | Path) -> str:
    """A hash of every entry under root: names, types, modes, sizes, mtimes and contents."""
    h = hashlib.sha256()
    for d, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files) + [f"{x}/" for x in dirs]:
            p = os.path.join(d, name.rstrip("/"))
            st = os.lstat(p)
            h.update(f"{os.path.relpath(p, root)}|{st.st_mode}|{st.st_size}|{st.st_mtime_ns}\n".encode())
            if os.path.isfile(p) and not os.path.islink(p):
                with open(p, "rb") as f:
                    h.update(f.read())
    return h.hexdigest()


def git(cwd: str | Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
    )
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    ).stdout.strip()


def make_unwritable(path: str | Path) -> None:
    """Make writing ``path`` fail for real: immutable as root, read-only otherwise."""
    if os.geteuid() == 0:
        subprocess.run(["chattr", "+i", os.fspath(path)], check=True)
    else:
        os.chmod(path, 0o444)
        os.chmod(os.path.dirname(path), 0o555)


def make_writable(path: str | Path) -> None:
    if os.geteuid() == 0:
        subprocess.run(["chattr", "-i", os.fspath(path)], check=False)
    else:
        os.chmod(os.path.dirname(path), 0o755)
        os.chmod(path, 0o644)
