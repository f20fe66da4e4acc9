"""Generate session files in ama's format for benchmarks.

    python bench/gen_sessions.py --out /tmp/ama-bench/sessions             # 1,000 sessions, ~67 MB
    python bench/gen_sessions.py --out DIR --big 10000 --result-bytes 2000   # one 10,000-entry session
    python bench/gen_sessions.py --out DIR --sessions 10000 --json spaced --vocab 1000000  # the scaling sets
    python bench/gen_sessions.py --out DIR --big 50000 --result-bytes 9000 --json spaced  # ~207 MB

Defaults (the issue's): 1,000 sessions, 12 turns each, 24 tool calls each (2 per turn),
2 KB tool results, about 67 MB, spread over 8 projects and the last 90 days.  Deterministic
for a given --seed.  Lines are written the way ama writes them (same encoder, same shapes);
``--json spaced`` rewrites every line the way Python's ``json.dumps`` writes it by default
(``", "`` and ``": "`` separators, non-ASCII as ``\\u`` escapes), ``--json shuffled`` also
reverses the key order of every object, as another program might: same entries, other bytes.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
import uuid
from datetime import UTC, datetime

from ama.messages import (
    AssistantMessage,
    Cost,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from ama.session.entries import (
    MessageEntry,
    ModelChangeEntry,
    SessionHeader,
    ThinkingLevelChangeEntry,
    encode_line,
)
from ama.session.layout import new_session_path

WORDS = (
    "parser lexer token error crash fix test refactor module function class import return value input "
    "output cache index query session branch rewind export search stats config sandbox network file"
).split()
TOOLS = ["read", "grep", "bash", "edit", "find", "ls", "write"]
MODELS = [
    ("anthropic", "claude-sonnet-4-5", "anthropic-messages", (3.0, 15.0, 0.3, 3.75)),
    ("openai", "gpt-4.1", "openai-completions", (2.0, 8.0, 0.5, 0.0)),
    ("deepseek", "deepseek-chat", "openai-completions", None),
]


def iso(ms: int) -> str:
    dt = datetime.fromtimestamp(ms / 1000, UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


#: extra distinct words of tool results (``--vocab``): identifiers, as code has them
VOCAB: list[str] = []


def identifiers(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [f"{rng.choice(WORDS)}_{rng.getrandbits(40):x}" for _ in range(n)]


def blob(rng: random.Random, size: int) -> str:
    lines = []
    total = 0
    i = 1
    while total < size:
        line = f"{i:4d}  {sentence(rng, 8)}"
        if VOCAB:
            line += " " + rng.choice(VOCAB)
        lines.append(line)
        total += len(line) + 1
        i += 1
    return "\n".join(lines)[:size]


def _reversed_keys(v: object) -> object:
    if isinstance(v, dict):
        return {k: _reversed_keys(v[k]) for k in reversed(list(v))}
    if isinstance(v, list):
        return [_reversed_keys(x) for x in v]
    return v


def reshape(line: bytes, style: str) -> bytes:
    """One encoded line in the given JSON style (``compact`` leaves it as ama wrote it)."""
    if style == "compact":
        return line
    value = json.loads(line)
    if style == "shuffled":
        value = _reversed_keys(value)
    return json.dumps(value).encode() + b"\n"


class Writer:
    def __init__(self, rng: random.Random, start_ms: int, style: str = "compact") -> None:
        self.style = style
        self.rng = rng
        self.ms = start_ms
        self.parent: str | None = None
        self.lines: list[bytes] = []
        self.n = 0

    def add(self, cls, **fields) -> None:
        self.n += 1
        eid = f"{self.n:08x}"
        self.ms += self.rng.randint(200, 4000)
        self.lines.append(reshape(encode_line(cls(eid, self.parent, iso(self.ms), **fields)), self.style))
        self.parent = eid


def usage(rng: random.Random, prices) -> Usage:
    u = Usage(
        input=rng.randint(50, 3000),
        output=rng.randint(20, 800),
        cache_read=rng.randint(0, 40000) if prices and prices[2] else 0,
        cache_write=rng.randint(0, 2000) if prices and prices[3] else 0,
    )
    u.total_tokens = u.input + u.output + u.cache_read + u.cache_write
    if prices:
        c = Cost(
            input=u.input * prices[0] / 1e6,
            output=u.output * prices[1] / 1e6,
            cache_read=u.cache_read * prices[2] / 1e6,
            cache_write=u.cache_write * prices[3] / 1e6,
        )
        c.total = c.input + c.output + c.cache_read + c.cache_write
        u.cost = c
    return u


def write_turn(w: Writer, calls: int, result_bytes: int, model) -> None:
    rng = w.rng
    provider, model_id, api, prices = model
    w.add(MessageEntry, message=UserMessage(content=sentence(rng, rng.randint(6, 30)), timestamp=w.ms))
    content: list = [TextContent(text=sentence(rng, 8))]
    ids = []
    for _ in range(calls):
        cid = f"call_{uuid.UUID(int=rng.getrandbits(128)).hex[:16]}"
        ids.append(cid)
        tool = rng.choice(TOOLS)
        content.append(ToolCall(id=cid, name=tool, arguments={"path": f"src/{rng.choice(WORDS)}.py", "pattern": rng.choice(WORDS)}))
    w.add(
        MessageEntry,
        message=AssistantMessage(
            content=content, api=api, provider=provider, model=model_id, usage=usage(rng, prices),
            stop_reason="toolUse" if calls else "stop", timestamp=w.ms,
        ),
    )
    for cid, block in zip(ids, content[1:]):
        w.add(
            MessageEntry,
            message=ToolResultMessage(
                tool_call_id=cid, tool_name=block.name, content=[TextContent(text=blob(rng, result_bytes))], timestamp=w.ms
            ),
        )
    if calls:
        w.add(
            MessageEntry,
            message=AssistantMessage(
                content=[TextContent(text=sentence(rng, 16))], api=api, provider=provider, model=model_id,
                usage=usage(rng, prices), stop_reason="stop", timestamp=w.ms,
            ),
        )


def write_session(
    out: str,
    cwd: str,
    rng: random.Random,
    start_ms: int,
    turns: int,
    calls_per_turn: int,
    result_bytes: int,
    style: str = "compact",
) -> str:
    sid = str(uuid.UUID(int=rng.getrandbits(128)))
    model = rng.choice(MODELS)
    header = SessionHeader(version=3, id=sid, timestamp=iso(start_ms), cwd=cwd)
    w = Writer(rng, start_ms, style)
    w.add(ModelChangeEntry, provider=model[0], model_id=model[1])
    w.add(ThinkingLevelChangeEntry, thinking_level=rng.choice(["off", "low", "medium"]))
    for _ in range(turns):
        write_turn(w, calls_per_turn, result_bytes, model)
    path = new_session_path(out, cwd, sid, iso(start_ms))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(reshape(encode_line(header), style))
        f.writelines(w.lines)
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="sessions directory to write into")
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--turns", type=int, default=12)
    ap.add_argument("--tool-calls", type=int, default=24, help="tool calls per session")
    ap.add_argument("--result-bytes", type=int, default=1800, help="characters of text per tool result (~2 KB JSON line)")
    ap.add_argument("--projects", type=int, default=8)
    ap.add_argument("--days", type=int, default=90)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--big", type=int, metavar="ENTRIES", help="write ONE session of about this many entries instead")
    ap.add_argument("--cwd", default=None, help="workspace of the generated sessions (default: /bench/project-<k>)")
    ap.add_argument(
        "--json",
        choices=("compact", "spaced", "shuffled"),
        default="compact",
        help="line style: as ama writes (compact), as Python's json writes (spaced), spaced with reversed key order",
    )
    ap.add_argument(
        "--vocab",
        type=int,
        default=0,
        metavar="N",
        help="add one of N distinct identifiers to every tool-result line (a vocabulary that grows like real code's)",
    )
    args = ap.parse_args()
    VOCAB[:] = identifiers(args.vocab, args.seed)
    rng = random.Random(args.seed)
    now = int(time.time() * 1000)
    t0 = time.perf_counter()
    if args.big:
        per_turn = 1 + 1 + 2 + 1  # user, assistant, 2 results, final assistant
        turns = max(1, args.big // per_turn)
        path = write_session(args.out, args.cwd or "/bench/big", rng, now - 86400_000, turns, 2, args.result_bytes, args.json)
        print(path)
        print(f"1 session, {os.path.getsize(path) / 1e6:.1f} MB, {time.perf_counter() - t0:.1f}s", file=sys.stderr)
        return 0
    calls_per_turn = max(0, args.tool_calls // max(1, args.turns))
    total = 0
    for i in range(args.sessions):
        cwd = args.cwd or f"/bench/project-{i % args.projects}"
        start = now - rng.randint(0, args.days * 86400_000)
        p = write_session(args.out, cwd, rng, start, args.turns, calls_per_turn, args.result_bytes, args.json)
        total += os.path.getsize(p)
    print(f"{args.sessions} sessions, {total / 1e6:.1f} MB in {args.out} ({time.perf_counter() - t0:.1f}s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
