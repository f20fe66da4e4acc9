"""One writer per file, crash safety, lock-free readers — with real processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ama.errors import Busy
from ama.session.reader import read_session
from ama.session.store import Session
from tests.conftest import FIXTURES, ama_cmd
from tests.session.helpers import simple_session, user

APPENDER = r"""
import sys, os
from ama.session.store import Session
from ama.messages import UserMessage
s = Session.open(sys.argv[1])
print("locked", flush=True)
big = "x" * int(sys.argv[2])
for i in range(1, int(sys.argv[3]) + 1):  # bounded: the file never grows past N lines
    s.append_message(UserMessage(content=f"{i} {big}"))
    if i == 20:
        print("appending", flush=True)
print("done", flush=True)
sys.stdin.read()
"""

HOLDER = r"""
import sys
from ama.session.store import Session
s = Session.open(sys.argv[1])
print("locked", flush=True)
sys.stdin.read()
"""


def _start(code: str, *args: str) -> subprocess.Popen:
    p = subprocess.Popen(
        [sys.executable, "-c", code, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert p.stdout.readline().strip() == "locked"
    return p


def test_second_process_gets_busy_naming_the_holder_pid(sessions_dir: Path) -> None:
    s = simple_session(sessions_dir, turns=1)
    s.close()
    holder = _start(HOLDER, s.path)
    try:
        with pytest.raises(Busy) as err:
            Session.open(s.path)
        assert f"process {holder.pid}" in err.value.message and s.path in err.value.message
        assert err.value.data["pid"] == holder.pid
        # readers take no lock
        assert len(read_session(s.path).entries) == 4
    finally:
        holder.stdin.close()
        holder.wait(10)
    Session.open(s.path).close()  # the lease is free once the holder exits


def test_lease_is_per_open_file_not_per_process(sessions_dir: Path) -> None:
    s = simple_session(sessions_dir, turns=1)
    with pytest.raises(Busy):
        Session.open(s.path)
    # reading the file in the same process must not release the writer's lease
    read_session(s.path)
    with pytest.raises(Busy):
        Session.open(s.path)
    s.close()


def test_sigkill_mid_append_loses_nothing_written_and_next_writer_appends(sessions_dir: Path) -> None:
    s = simple_session(sessions_dir, turns=1)
    s.close()
    p = _start(APPENDER, s.path, "200000", "300")  # ~200 KB lines make a cut line likely; at most 60 MB
    assert p.stdout.readline().strip() == "appending"
    # read while the other process is appending: whole entries only (maybe a partial tail)
    d = read_session(s.path)
    assert d.damaged == [] and len(d.entries) >= 24
    os.kill(p.pid, signal.SIGKILL)
    p.wait(10)
    d = read_session(s.path)
    assert d.damaged == []
    n = len(d.entries)
    numbers = [int(e.message.content.split(" ", 1)[0]) for e in d.entries[4:]]
    assert numbers == list(range(1, n - 3))  # every whole line survived, in order
    # resume: the new entry is intact and parented on the last whole entry
    with Session.open(s.path) as s2:
        new = s2.append_message(user("resumed"))
    d2 = read_session(s.path)
    assert d2.entries[-1].id == new.id and d2.entries[-1].parent_id == d.entries[-1].id
    assert d2.partial_tail is False
    assert len(d2.damaged) == (1 if d.partial_tail else 0)


def test_readers_see_whole_lines_while_a_writer_appends(sessions_dir: Path) -> None:
    s = simple_session(sessions_dir, turns=1)
    s.close()
    p = _start(APPENDER, s.path, "20000", "1000")  # at most 20 MB
    try:
        assert p.stdout.readline().strip() == "appending"
        seen = 0
        for _ in range(30):
            d = read_session(s.path)
            assert d.damaged == [] and d.header is not None
            assert len(d.entries) >= seen
            seen = len(d.entries)
    finally:
        p.kill()
        p.wait(10)


def _limited(limit: int):
    """preexec: a file size limit (``EFBIG`` instead of a killing SIGXFSZ), like a full disk."""
    import resource
    import signal

    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


@pytest.mark.parametrize("limit", [0, 10], ids=["nothing-fits", "part-of-the-header-fits"])
def test_a_header_that_cannot_be_written_leaves_no_file(tmp_path: Path, limit: int) -> None:
    sessions = tmp_path / "sessions"
    code = (
        "import sys\n"
        "from ama.errors import AmaError\n"
        "from ama.session.store import Session\n"
        "from tests.session.helpers import user\n"
        f"s = Session.create('/work/p', {str(sessions)!r})\n"
        "try:\n"
        "    s.append_message(user('hi'))\n"
        "except AmaError as e:\n"
        "    print(e.code, e.message)\n"
        "    sys.exit(3)\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", code], preexec_fn=_limited(limit), capture_output=True, text=True, timeout=60
    )
    assert p.returncode == 3, p.stderr
    assert p.stdout.startswith("io_error cannot append to session file") and "File too large" in p.stdout
    assert [str(x) for x in sessions.rglob("*")] == []


def test_print_mode_on_a_full_disk_fails_cleanly_without_a_file(tmp_path: Path, ama_home: Path) -> None:
    p = subprocess.run(
        ama_cmd("-p", "hi", "--model", f"scripted/{FIXTURES.parent.parent / 'examples' / 'demo.json'}"),
        cwd=tmp_path,
        preexec_fn=_limited(0),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 1 and "File too large" in p.stderr and "Traceback" not in p.stderr
    assert list((ama_home / "sessions").rglob("*.jsonl")) == []
