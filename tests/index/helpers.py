"""Hand-built session files with chosen timestamps (real ama lines, written directly)."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from pathlib import Path
from typing import Any

from ama.messages import (
    AssistantMessage,
    Cost,
    ImageContent,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from ama.session.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    ContextEditEntry,
    CustomEntry,
    LeafLine,
    MessageEntry,
    ModelChangeEntry,
    SessionHeader,
    SessionInfoEntry,
    UsageEntry,
    encode_line,
)
from ama.session.layout import new_session_path
from tests.conftest import ama_cmd


def usage(inp: int = 0, out: int = 0, cr: int = 0, cw: int = 0, cost: float | None = None) -> Usage:
    u = Usage(input=inp, output=out, cache_read=cr, cache_write=cw, total_tokens=inp + out + cr + cw)
    if cost is not None:
        u.cost = Cost(total=cost)
    return u


class Builder:
    """Appends entries to a new session file; ``ts`` are ISO strings chosen by the test."""

    def __init__(
        self,
        sessions_dir: Path | str,
        cwd: str = "/p",
        *,
        sid: str | None = None,
        created: str = "2026-03-01T10:00:00.000Z",
    ):
        self.sid = sid or str(uuid.uuid4())
        self.cwd = cwd
        self.path = new_session_path(os.fspath(sessions_dir), cwd, self.sid, created)
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        self.n = 0
        self.parent: str | None = None
        with open(self.path, "wb") as f:
            f.write(encode_line(SessionHeader(version=3, id=self.sid, timestamp=created, cwd=cwd)))

    def _add(self, cls, ts: str, **fields: Any) -> str:
        self.n += 1
        eid = f"{self.n:08x}"
        self.raw(encode_line(cls(eid, self.parent, ts, **fields)))
        self.parent = eid
        return eid

    def raw(self, line: bytes) -> None:
        with open(self.path, "ab") as f:
            f.write(line)

    def user(self, text: str, ts: str, *, origin: str | None = None, images: int = 0) -> str:
        content: Any = text
        if images:
            content = [TextContent(text=text)] + [
                ImageContent(data="iVBORw0KGgo=", mime_type="image/png")
            ] * images
        msg = (
            UserMessage(content=content, timestamp=0)
            if origin is None
            else UserMessage(content=content, origin=origin)
        )
        return self._add(MessageEntry, ts, message=msg)

    def assistant(
        self,
        ts: str,
        text: str = "ok",
        *,
        provider: str = "anthropic",
        model: str = "claude",
        u: Usage | None = None,
        stop: str = "stop",
        tools: list[tuple[str, dict]] = (),
        error: str | None = None,
    ) -> str:
        content: list = [TextContent(text=text)] if text else []
        content += [
            ToolCall(id=f"c{self.n}_{i}", name=name, arguments=args) for i, (name, args) in enumerate(tools)
        ]
        msg = AssistantMessage(
            content=content,
            api="anthropic-messages",
            provider=provider,
            model=model,
            usage=u or usage(),
            stop_reason=stop,
        )
        if error is not None:
            msg.error_message = error
        return self._add(MessageEntry, ts, message=msg)

    def result(self, ts: str, text: str, *, name: str = "read", call_id: str = "c") -> str:
        return self._add(
            MessageEntry,
            ts,
            message=ToolResultMessage(tool_call_id=call_id, tool_name=name, content=[TextContent(text=text)]),
        )

    def usage_entry(self, ts: str, kind: str, provider: str, model: str, u: Usage) -> str:
        return self._add(UsageEntry, ts, kind=kind, provider=provider, model=model, usage=u)

    def model_change(self, ts: str, provider: str, model: str, channel: str | None = None) -> str:
        kw: dict = {"provider": provider, "model_id": model}
        if channel is not None:
            kw["channel"] = channel
        return self._add(ModelChangeEntry, ts, **kw)

    def context_edit(self, ts: str, target: str, reason: str = "retry") -> str:
        return self._add(ContextEditEntry, ts, target_id=target, replacement=None, reason=reason)

    def compaction(self, ts: str, summary: str, u: Usage | None = None) -> str:
        kw: dict = {"summary": summary, "first_kept_entry_id": None, "tokens_before": 100}
        if u is not None:
            kw["usage"] = u
        return self._add(CompactionEntry, ts, **kw)

    def branch_summary(self, ts: str, summary: str, u: Usage | None = None) -> str:
        kw: dict = {"from_id": None, "summary": summary}
        if u is not None:
            kw["usage"] = u
        return self._add(BranchSummaryEntry, ts, **kw)

    def custom(self, ts: str, custom_type: str, data: Any) -> str:
        return self._add(CustomEntry, ts, custom_type=custom_type, data=data)

    def name(self, ts: str, name: str) -> str:
        return self._add(SessionInfoEntry, ts, name=name)

    def leaf(self, target: str | None, ts: str = "2026-03-01T10:00:00.000Z") -> None:
        self.raw(encode_line(LeafLine(target_id=target, timestamp=ts)))
        self.parent = target


def ama(
    *args: str,
    cwd: str | Path | None = None,
    env: dict | None = None,
    rc: int | None = 0,
    stdin: str | None = None,
):
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    p = subprocess.run(
        ama_cmd(*args), cwd=cwd, capture_output=True, text=True, timeout=120, env=full_env, input=stdin
    )
    if rc is not None:
        assert p.returncode == rc, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr, p.stderr
    return p


def ama_json(*args: str, **kw) -> Any:
    return json.loads(ama(*args, "--json", **kw).stdout)


def _reversed_keys(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _reversed_keys(v[k]) for k in reversed(list(v))}
    if isinstance(v, list):
        return [_reversed_keys(x) for x in v]
    return v


def restyle(sessions_dir: Path | str, style: str) -> None:
    """Rewrite every session file's lines in another JSON layout, same values:
    ``spaced`` as Python's ``json.dumps`` writes by default (``", "``, ``": "``, ``\\u``
    escapes), ``shuffled`` spaced with every object's keys in reverse order.  Lines that
    are not JSON stay as they are."""
    for path in sorted(Path(sessions_dir).rglob("*.jsonl")):
        out = []
        for line in path.read_bytes().splitlines(keepends=True):
            try:
                value = json.loads(line)
            except ValueError:
                out.append(line)
                continue
            if style == "shuffled":
                value = _reversed_keys(value)
            out.append(json.dumps(value).encode() + b"\n")
        path.write_bytes(b"".join(out))


#: how to take an index back to the schema before each migration (tests of upgrades in place)
_UNDO = {
    5: ["ALTER TABLE runs DROP COLUMN details"],
    6: [
        "DROP TRIGGER files_insert_unverify",
        "DROP TRIGGER files_delete_unverify",
        "DROP TRIGGER files_update_unverify",
        "ALTER TABLE roots DROP COLUMN verified",
    ],
    7: ["DROP TABLE catalog"],
}


def schema_back_to(db: Any, version: int) -> None:
    """Make the index at ``db`` (an open sqlite3 connection) look as an ama of schema
    ``version`` left it: later migrations undone and unrecorded (the caller commits)."""
    (have,) = db.execute("SELECT max(version) FROM schema_migrations").fetchone()
    for v in range(have, version, -1):
        for sql in _UNDO[v]:
            db.execute(sql)
        db.execute("DELETE FROM schema_migrations WHERE version = ?", (v,))
