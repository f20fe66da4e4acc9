"""A resumed pi session gets ama's system message appended at its leaf; every request after
that must still carry the system content first (strict chat templates refuse anything else).
Checked on the request bodies both adapters send to a local server."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import ama.ai
from ama.ai import Context
from ama.messages import SystemMessage, UserMessage
from ama.session.store import Session

from .helpers import TOOLS, anthropic_model, body, collect, openai_model
from .server import Reply, fixture, split_events

pytestmark = pytest.mark.anyio

PI_V3 = Path(__file__).parents[1] / "fixtures" / "pi" / "v3-session.jsonl"


@pytest.fixture(autouse=True)
async def _close_client():
    yield
    await ama.ai.aclose()


def continued_pi_context(tmp_path: Path) -> Context:
    """The v3 pi fixture continued the way ama continues it: its system message appended at
    the leaf (the file has none), then a new prompt; projected from the file."""
    path = tmp_path / "pi.jsonl"
    shutil.copy(PI_V3, path)
    with Session.open(path) as s:
        s.append_message(SystemMessage(content="You are ama.", timestamp=1))
        s.append_message(UserMessage(content="and now the lexer", timestamp=2))
    ctx = Session.load(path).context()
    return Context(system_prompt="", messages=ctx.messages, tools=list(TOOLS))


async def test_openai_request_has_one_system_message_and_it_is_first(server, tmp_path: Path):
    server.queue(Reply(chunks=split_events(fixture("openai_text.sse"))))
    await collect(openai_model(server.url), continued_pi_context(tmp_path))
    msgs = body(server.requests[-1])["messages"]
    roles = [m["role"] for m in msgs]
    assert roles[0] == "system" and msgs[0]["content"] == "You are ama."
    assert "system" not in roles[1:], roles
    assert msgs[-1] == {"role": "user", "content": "and now the lexer"}
    assert roles[1] == "user"  # the pi history follows, from its first user message


async def test_anthropic_request_has_the_system_text_and_alternating_turns(server, tmp_path: Path):
    server.queue(Reply(chunks=split_events(fixture("anthropic_text.sse"))))
    await collect(anthropic_model(server.url), continued_pi_context(tmp_path))
    b = body(server.requests[-1])
    assert [blk["text"] for blk in b["system"]] == ["You are ama."]
    roles = [m["role"] for m in b["messages"]]
    assert roles[0] == "user" and all(a != b for a, b in zip(roles, roles[1:])), roles
    assert b["messages"][-1]["content"][-1]["text"] == "and now the lexer"
