"""The scripted provider: JSON and YAML scripts, errors, chunks, abort, turn selection."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ama.ai import Context, ModelRegistry, StreamOptions, complete, reset_scripted, stream
from ama.messages import (
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

from .helpers import collect, types

pytestmark = pytest.mark.anyio

YAML_SCRIPT = """\
# a two-step demo
contextWindow: 50000
cost: {input: 3, output: 15}
turns:
  - thinking: Let me look at the file first.
    text: I'll read README.md.
    toolCalls:
      - {name: read, arguments: {path: README.md}}
    usage: {input: 1200, output: 40, cacheRead: 1000}
  - error: {status: 529, type: overloaded_error, message: overloaded, retryAfter: 2}
  - text: The README says hello.
    usage: {input: 30, output: 8}
"""


def model_of(path: Path):
    return ModelRegistry.load(None).get(f"scripted/{path}")


def ctx(*messages) -> Context:
    return Context(system_prompt="sys", messages=[UserMessage(content="go"), *messages])


def reply(msg: AssistantMessage, results: dict[str, str] | None = None) -> list:
    out: list = [msg]
    for block in msg.content:
        if isinstance(block, ToolCall):
            out.append(ToolResultMessage(tool_call_id=block.id, tool_name=block.name, content=[TextContent(text="ok")]))
    return out


@pytest.fixture
def yaml_script(tmp_path: Path) -> Path:
    p = tmp_path / "demo.yaml"
    p.write_text(YAML_SCRIPT)
    return p


async def test_yaml_script_turns_errors_and_retry(yaml_script: Path):
    model = model_of(yaml_script)
    assert (model.api, model.provider, model.id) == ("scripted", "scripted", str(yaml_script))
    assert model.context_window == 50000 and model.cost is not None

    records: list[dict] = []
    opts = StreamOptions(on_request=records.append)
    events, final = await collect(model, ctx(), opts)
    assert types(events) == [
        "start", "thinking_start", "thinking_delta", "thinking_end",
        "text_start", "text_delta", "text_end", "toolcall_start", "toolcall_delta", "toolcall_end", "done",
    ]  # fmt: skip
    m1 = final.message
    assert m1.api == "scripted" and m1.stop_reason == "toolUse"
    assert m1.content == [
        ThinkingContent(thinking="Let me look at the file first."),
        TextContent(text="I'll read README.md."),
        ToolCall(id="call_1_1", name="read", arguments={"path": "README.md"}),
    ]
    u = m1.usage
    assert (u.input, u.output, u.cache_read, u.total_tokens) == (1200, 40, 1000, 2240)
    assert u.cost.total == pytest.approx((1200 * 3 + 40 * 15) / 1e6)  # cache read has no price here

    history = reply(m1)
    _, failed = await collect(model, ctx(*history), opts)
    assert failed.reason == "error"
    err = failed.error
    assert (err.code, err.retryable, err.http_status, err.retry_after) == ("overloaded", True, 529, 2)
    # the agent retries with the same context (the failed message may even be in it)
    _, final3 = await collect(model, ctx(*history, failed.message), opts)
    assert final3.message.content == [TextContent(text="The README says hello.")]
    assert final3.message.stop_reason == "stop"
    assert [r["stopReason"] for r in records] == ["toolUse", "error", "stop"]
    assert [r["httpStatus"] for r in records] == [None, 529, None]
    assert all(r["provider"] == "scripted" and r["channel"] == "scripted" for r in records)

    # past the end: a clear, non-retryable error
    _, over = await collect(model, ctx(*history, final3.message, UserMessage(content="again")))
    assert over.error.code == "invalid_request" and not over.error.retryable
    assert "no turn 4" in over.message.error_message and "has 3" in over.message.error_message


async def test_json_script_with_content_blocks_and_chunks(tmp_path: Path):
    script = {
        "chunkSize": 4,
        "turns": [
            {
                "content": [
                    {"type": "text", "text": "abcdefghij"},
                    {"type": "toolCall", "id": "t1", "name": "bash", "arguments": {"command": "ls"}},
                ],
            },
            {"text": ["Hel", "lo"], "stopReason": "length"},
            "plain string turn",
        ],
    }
    p = tmp_path / "s.json"
    p.write_text(json.dumps(script))
    model = model_of(p)
    events, final = await collect(model, ctx())
    assert [e.delta for e in events if e.type == "text_delta"] == ["abcd", "efgh", "ij"]
    assert "".join(e.delta for e in events if e.type == "toolcall_delta") == '{"command":"ls"}'
    assert final.message.content[1] == ToolCall(id="t1", name="bash", arguments={"command": "ls"})
    assert final.reason == "toolUse"
    events, final = await collect(model, ctx(*reply(final.message)))
    assert [e.delta for e in events if e.type == "text_delta"] == ["Hel", "lo"]
    assert final.reason == "length"
    msg = await complete(model, ctx(*reply(final.message)))
    assert msg.content == [TextContent(text="plain string turn")]


async def test_a_new_process_continues_from_the_context(yaml_script: Path):
    model = model_of(yaml_script)
    m1 = await complete(model, ctx())
    reset_scripted()  # as if a new process resumed the session
    m3 = await complete(model, ctx(*reply(m1)))
    assert m3.stop_reason == "error"  # the error turn before the second reply is served again
    m3 = await complete(model, ctx(*reply(m1)))
    assert m3.content == [TextContent(text="The README says hello.")]


def test_turns_match_context_across_real_processes(yaml_script: Path, tmp_path: Path):
    code = textwrap.dedent(
        f"""
        import asyncio, sys
        from ama.ai import Context, ModelRegistry, complete
        from ama.messages import AssistantMessage, TextContent, UserMessage
        n = int(sys.argv[1])
        msgs = [UserMessage(content="go")]
        for i in range(n):
            msgs += [AssistantMessage(content=[TextContent(text=str(i))], api="scripted"), UserMessage(content="more")]
        model = ModelRegistry.load(None).get("scripted/{yaml_script}")
        out = []
        for _ in range(2):  # a retry inside the process
            m = asyncio.run(complete(model, Context(system_prompt="", messages=msgs)))
            out.append(m.stop_reason + ":" + "".join(getattr(b, "text", "") for b in m.content))
        print("|".join(out))
        """
    )
    results = [
        subprocess.run([sys.executable, "-c", code, str(n)], capture_output=True, text=True, check=True).stdout.strip()
        for n in (0, 1)
    ]
    assert results[0] == "toolUse:I'll read README.md.|error:"
    assert results[1] == "error:|stop:The README says hello."


async def test_sequence_and_context_modes(tmp_path: Path):
    p = tmp_path / "seq.yaml"
    p.write_text("mode: sequence\nturns: [one, two, three]\n")
    model = model_of(p)
    got = [(await complete(model, ctx())).content[0].text for _ in range(3)]
    assert got == ["one", "two", "three"]

    q = tmp_path / "ctx.yaml"
    q.write_text("mode: context\nturns: [{error: {status: 500, message: boom}}, one, two]\n")
    model = model_of(q)
    first = await complete(model, ctx())
    assert first.stop_reason == "error"
    assert (await complete(model, ctx())).content[0].text == "one"
    # context decides: a context with one reply gets "two", and so does a rewound one asked again
    one = AssistantMessage(content=[TextContent(text="one")], api="scripted")
    assert (await complete(model, ctx(one, UserMessage(content="x")))).content[0].text == "two"


async def test_sequence_auto_mode_serves_summary_requests_in_order(tmp_path: Path):
    p = tmp_path / "auto.json"
    p.write_text(json.dumps(["reply", "a summary", "after compaction"]))
    model = model_of(p)
    assert (await complete(model, ctx())).content[0].text == "reply"
    # a request without assistant messages (e.g. a summary) takes the next turn
    assert (await complete(model, ctx())).content[0].text == "a summary"
    assert (await complete(model, ctx())).content[0].text == "after compaction"


async def test_partial_reply_then_dropped_connection(tmp_path: Path):
    p = tmp_path / "drop.json"
    p.write_text(json.dumps([{"text": "Half a sent", "error": {"type": "network", "message": "connection reset"}}]))
    events, final = await collect(model_of(p), ctx())
    assert types(events) == ["start", "text_start", "text_delta", "text_end", "error"]
    assert final.message.content == [TextContent(text="Half a sent")]
    assert final.error.code == "network" and final.error.retryable


async def test_abort_during_delayed_chunks(tmp_path: Path):
    p = tmp_path / "slow.yaml"
    p.write_text("turns:\n  - text: '" + "abcdefghij" * 10 + "'\n    chunkSize: 1\n    delayMs: 20\n")
    abort = asyncio.Event()
    events = []
    async for ev in stream(model_of(p), ctx(), StreamOptions(abort=abort)):
        events.append(ev)
        if ev.type == "text_delta" and ev.delta == "b":
            abort.set()
    final = events[-1]
    assert final.type == "error" and final.reason == "aborted"
    assert final.message.stop_reason == "aborted"
    text = final.message.content[0].text
    assert text.startswith("ab") and len(text) < 100


async def test_bad_scripts_end_in_error_events(tmp_path: Path):
    bad_yaml = tmp_path / "bad.yaml"
    bad_yaml.write_text("turns: [unclosed\n")
    unknown = tmp_path / "unknown.json"
    unknown.write_text(json.dumps([{"txt": "typo"}]))
    missing = tmp_path / "missing.json"
    for path, needle in ((bad_yaml, "invalid YAML"), (unknown, "unknown key(s) txt"), (missing, "cannot read")):
        _, final = await collect(model_of(path), ctx())
        assert final.reason == "error" and needle in final.message.error_message
        assert not final.error.retryable
