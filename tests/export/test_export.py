"""`ama sessions export`: formats, secrets never leave, escapes stripped, safe writing, limits."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import stat
from pathlib import Path

import pytest

from ama.export.redact import clean, sanitize
from ama.session.reader import read_session
from tests.index.helpers import Builder, ama, usage

SECRETS = {
    "openai": "sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2",
    "anthropic": "sk-ant-api03-" + "x" * 30,
    "ghp": "ghp_" + "a1" * 18,
    "github_pat": "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
    "slack": "xoxb-1234567890-0987654321-AbCdEfGhIjKl",
    "google": "AIzaSyD-1234567890abcdefghijklmnopqrstuv",
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "npm": "npm_" + "b2" * 18,
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
}
# (text that holds a secret, the secret part that must never appear)
SHAPED = [
    ("Authorization: Bearer abcDEF123456ghiJKL", "abcDEF123456ghiJKL"),
    ("curl -H 'Authorization: Basic dXNlcjpwYXNzd29yZA=='", "dXNlcjpwYXNzd29yZA=="),
    (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END RSA PRIVATE KEY-----",
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
    ),
    (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU (cut off",
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU",
    ),
    ("apiKey=plainvalue123", "plainvalue123"),
    ('{"password": "hunter2hunter2"}', "hunter2hunter2"),
    ("token=tok_live_abcdef", "tok_live_abcdef"),
    ("client_secret = 'my-secret-value'", "my-secret-value"),
    ("authorization: xyz-auth-value", "xyz-auth-value"),
    ("git clone https://alice:pa55w0rd@example.com/repo.git", "pa55w0rd"),
]
KEYED = {
    "api_key": "benign-looking-value-1",
    "x-auth-token": "benign-looking-value-2",
    "Password": "benign-looking-value-3",
}
NEEDLES = [*SECRETS.values(), *(s for _, s in SHAPED), *KEYED.values()]
DIRTY = "red \x1b[31mALERT\x1b[0m title\x1b]0;owned\x07 evil\u202etxt.exe zero\u200bwidth bom\ufeff bell\x07"
BAD_CHARS = [
    "\x1b",
    "\u202e",
    "\u200b",
    "\ufeff",
    "\x07",
    "\\u001b",
    "\\u202e",
    "\\u200b",
    "\\ufeff",
    "\\u0007",
]


@pytest.fixture
def secret_session(sessions_dir: Path) -> Builder:
    s = Builder(sessions_dir, "/p")
    s.model_change("2026-03-01T09:59:00.000Z", "anthropic", "claude", channel="main")
    text = "my keys: " + " ".join(SECRETS.values()) + "\n" + "\n".join(t for t, _ in SHAPED)
    s.user(text, "2026-03-01T10:00:00.000Z")
    args = {
        "command": text,
        **KEYED,
        SECRETS["openai"]: "a secret as a key",
        "nested": {"token": "benign-looking-value-4"},
    }
    NEEDLES.append("benign-looking-value-4")
    s.assistant(
        "2026-03-01T10:00:05.000Z",
        "assistant says " + text,
        stop="toolUse",
        tools=[("bash", args)],
        u=usage(10, 5, cost=0.01),
    )
    s.result("2026-03-01T10:00:06.000Z", "output: " + text + "\n" + DIRTY, name="bash")
    s.raw(
        json.dumps(
            {
                "type": "message",
                "id": "th1",
                "parentId": s.parent,
                "timestamp": "2026-03-01T10:00:07.000Z",
                "message": {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "thinking " + text},
                        {"type": "text", "text": DIRTY},
                    ],
                    "api": "x",
                    "provider": "anthropic",
                    "model": "claude",
                    "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
                    "stopReason": "stop",
                    "timestamp": 0,
                },
            },
            ensure_ascii=False,
        ).encode()
        + b"\n"
    )
    s.parent = "th1"
    s.custom("2026-03-01T10:00:08.000Z", "my.ext", {"token": "benign-looking-value-5", "note": text})
    NEEDLES.append("benign-looking-value-5")
    s.compaction("2026-03-01T10:00:09.000Z", "summary with " + text, usage(5, 5))
    s.user("second question", "2026-03-01T10:00:10.000Z", images=1)
    return s


def export(*args: str) -> str:
    return ama("sessions", "export", *args).stdout


@pytest.mark.parametrize("fmt", ["md", "json", "jsonl"])
@pytest.mark.parametrize("branch", ["leaf", "all"])
def test_no_secret_and_no_escape_survives(secret_session: Builder, fmt: str, branch: str) -> None:
    out = export(secret_session.sid[:8], "--format", fmt, "--branch", branch)
    for needle in NEEDLES:
        assert needle not in out, (fmt, needle)
    for bad in BAD_CHARS:
        assert bad not in out, (fmt, repr(bad))
    assert "[REDACTED]" in out
    if fmt != "md":
        assert "iVBORw0KGgo=" in out  # image data is kept


def test_markdown_content(secret_session: Builder, sessions_dir: Path) -> None:
    s = Builder(sessions_dir, "/q")
    s.user("first " + "x" * 70_000, "2026-03-01T10:00:00.000Z")
    s.assistant("2026-03-01T10:00:05.000Z", "", stop="toolUse", tools=[("write", {"content": "y" * 900})])
    s.result("2026-03-01T10:00:06.000Z", "```\n" + "z" * 3000, name="write")
    s.model_change("2026-03-01T10:00:07.000Z", "openai", "gpt")
    s.branch_summary("2026-03-01T10:00:08.000Z", "we went elsewhere")
    s.user("second", "2026-03-01T10:01:00.000Z", images=1)
    md = export(s.sid[:8])
    assert "## #1 User · 2026-03-01T10:00:00.000Z" in md and "## #2 User" in md
    assert "[cut: " in md and "more bytes]" in md  # the 70 KB message: cut at 64 KiB
    assert '"content": "' + "y" * 480 in md and "… [cut: " in md and "y" * 600 not in md
    assert "z" * 1996 in md and "z" * 1997 not in md and "````" in md  # cut at 2,000; a longer fence
    assert "*Model changed to openai/gpt · 2026-03-01T10:00:07.000Z*" in md
    assert "> **Branch summary**" in md and "*[image: image/png" in md
    assert "## Usage" in md and "| **total** |" in md
    leaked = export(secret_session.sid[:8])
    assert "thinking" not in leaked.split("---", 1)[1]


def test_markdown_body_hash_is_stable(secret_session: Builder) -> None:
    def body_and_hash(*extra: str) -> tuple[str, str]:
        md = export(secret_session.sid[:8], *extra)
        digest = md.split("- Body SHA-256: `", 1)[1].split("`", 1)[0]
        body = md.split("\n---\n\n", 1)[1]
        assert hashlib.sha256(body.encode()).hexdigest() == digest
        return body, digest

    one, two = body_and_hash(), body_and_hash()
    assert one == two
    assert body_and_hash("--branch", "all")[0].count("## #") == one[0].count("## #")
    assert export(secret_session.sid[:8]).count("Body SHA-256") == 1


def test_json_format_and_jsonl_round_trip(secret_session: Builder, tmp_path: Path) -> None:
    doc = json.loads(export(secret_session.sid[:8], "--format", "json"))
    assert (doc["format"], doc["version"], doc["branch"]) == ("ama.session-export", 1, "leaf")
    assert doc["session"]["id"] == secret_session.sid and doc["leafId"] == secret_session.parent
    assert [u["n"] for u in doc["userMessages"]] == [1, 2]
    assert doc["usage"]["requests"] == 3 and doc["usage"]["cost"] == pytest.approx(0.01)
    assert [e["id"] for e in doc["entries"]][:2] == ["00000001", "00000002"]
    out = tmp_path / "copy.jsonl"
    ama("sessions", "export", secret_session.sid[:8], "--format", "jsonl", "--output", str(out))
    data = read_session(out)
    assert data.header is not None and data.header.id == secret_session.sid
    assert not data.problems and len(data.entries) == len(doc["entries"]) and data.leaf_lines == 0
    shown = json.loads(ama("sessions", "show", str(out), "--json").stdout)
    assert len(shown["userMessages"]) == 2


def test_output_file_is_0600_and_never_overwritten(secret_session: Builder, tmp_path: Path) -> None:
    out = tmp_path / "s.md"
    p = ama("sessions", "export", secret_session.sid[:8], "--output", str(out))
    assert p.stdout == "" and "exported" in p.stderr
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    before = out.read_bytes()
    p = ama("sessions", "export", secret_session.sid[:8], "--output", str(out), rc=1)
    assert "already exists" in p.stderr and out.read_bytes() == before
    link = tmp_path / "link.md"
    link.symlink_to(tmp_path / "target.md")
    ama("sessions", "export", secret_session.sid[:8], "--output", str(link), rc=1)
    assert not (tmp_path / "target.md").exists()


def test_a_whole_export_over_16_mib_fails_and_writes_nothing(sessions_dir: Path, tmp_path: Path) -> None:
    s = Builder(sessions_dir, "/big")
    png = base64.b64encode(b"\x89PNG" + b"\x00" * 4_500_000).decode()
    for i in range(3):  # image data is never cut: ~18 MB of it
        s.raw(
            json.dumps(
                {
                    "type": "message",
                    "id": f"im{i}",
                    "parentId": s.parent,
                    "timestamp": "2026-03-01T10:00:00.000Z",
                    "message": {
                        "role": "user",
                        "content": [{"type": "image", "data": png, "mimeType": "image/png"}],
                    },
                }
            ).encode()
            + b"\n"
        )
        s.parent = f"im{i}"
    out = tmp_path / "big.json"
    p = ama("sessions", "export", s.sid[:8], "--format", "json", "--output", str(out), rc=1)
    assert "over the limit of 16 MiB" in p.stderr and not out.exists()
    md = export(s.sid[:8])  # placeholders only: small
    assert md.count("*[image: image/png, ") == 3


def test_redaction_helpers() -> None:
    assert (
        clean("sk-abcdefghijklmnop1234 and task-management-system-design")
        == "[REDACTED] and task-management-system-design"
    )
    assert clean("maxTokens: 4096") == "maxTokens: 4096"
    assert sanitize("a\x1b[1mb\x1b[0m\tc\nd\u2066e\u2069") == "ab\tc\nde"
