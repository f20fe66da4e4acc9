"""Exports do not name the user's machine (workspace -> <workspace>, home -> ~) unless
--keep-paths; and they read the session file from one stable snapshot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ama.errors import Busy
from ama.export import export_session
from tests.agent.helpers import write_script
from tests.index.helpers import Builder, ama
from tests.rpc.helpers import Rpc


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home" / "alice"
    (h / "proj").mkdir(parents=True)
    return h


def path_session(sessions_dir: Path, home: Path) -> Builder:
    ws = home / "proj"
    s = Builder(sessions_dir, str(ws))
    s.user(f"please create {ws}/a.txt and read {home}/.config/app.toml", "2026-03-01T10:00:00.000Z")
    s.assistant(
        "2026-03-01T10:00:05.000Z",
        f"Created {ws}/a.txt",
        stop="toolUse",
        tools=[("write", {"path": f"{ws}/a.txt", "content": "x"})],
    )
    s.result("2026-03-01T10:00:06.000Z", f"Created {ws}/a.txt (1 byte); see {home}/.bashrc", name="write")
    return s


@pytest.mark.parametrize("fmt", ["md", "json", "jsonl"])
def test_paths_are_masked_in_every_format(sessions_dir: Path, home: Path, fmt: str) -> None:
    s = path_session(sessions_dir, home)
    out = ama("sessions", "export", s.sid[:8], "--format", fmt, env={"HOME": str(home)}).stdout
    assert str(home) not in out, out
    assert "<workspace>/a.txt" in out and "~/.config/app.toml" in out and "~/.bashrc" in out
    if fmt == "json":
        doc = json.loads(out)
        assert doc["session"]["cwd"] == "<workspace>"
        assert doc["entries"][1]["message"]["content"][1]["arguments"]["path"] == "<workspace>/a.txt"
    if fmt == "jsonl":
        assert json.loads(out.splitlines()[0])["cwd"] == "<workspace>"
    if fmt == "md":
        assert "- Project: `<workspace>`" in out


@pytest.mark.parametrize("fmt", ["md", "json", "jsonl"])
def test_keep_paths_keeps_them(sessions_dir: Path, home: Path, fmt: str) -> None:
    s = path_session(sessions_dir, home)
    out = ama("sessions", "export", s.sid[:8], "--format", fmt, "--keep-paths", env={"HOME": str(home)}).stdout
    assert f"{home}/proj/a.txt" in out and f"{home}/.bashrc" in out
    assert "<workspace>" not in out


def test_rpc_export_masks_paths(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    model = write_script(tmp_path / "s.json", [f"I looked at {ws}/notes.md"], mode="sequence")
    rpc = Rpc(ws, "--model", model)
    try:
        rpc.event("session_start")
        rpc.call("prompt", message=f"read {ws}/notes.md")
        rpc.event("agent_settled")
        md = rpc.call("export")["data"]["markdown"]
    finally:
        assert rpc.close() == 0
    assert str(ws) not in md
    assert "I looked at <workspace>/notes.md" in md and "read <workspace>/notes.md" in md


def test_export_reads_one_stable_snapshot(sessions_dir: Path, home: Path) -> None:
    s = path_session(sessions_dir, home)
    opened: list[str] = []

    def appending_open(path, mode):
        f = open(path, mode)  # noqa: SIM115 - returned to the caller, who closes it
        with open(path, "ab") as w:  # another writer appends during every read
            line = '{"type":"custom","id":"%08x","parentId":null,"timestamp":"t","customType":"x","data":null}\n'
            w.write((line % len(opened)).encode())
        opened.append(path)
        return f

    with pytest.raises(Busy) as err:
        export_session(s.path, "jsonl", open_=appending_open)
    assert len(opened) == 3 and "kept changing" in err.value.message
    quiet: list[str] = []

    def counting_open(path, mode):
        quiet.append(path)
        return open(path, mode)

    out = export_session(s.path, "jsonl", "all", open_=counting_open).decode()
    assert quiet == [s.path]  # one read: the header comes from the same bytes
    assert json.loads(out.splitlines()[0])["type"] == "session"
