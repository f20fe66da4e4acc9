"""The compaction notice and the status-line data (agent/context_status.py)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from ama.agent.context_status import compaction_notice, context_status, short_tokens
from ama.messages import UserMessage
from ama.session.entries import MessageEntry
from tests.agent.helpers import make_agent
from tests.agent.window_server import WindowServer


def test_notice_wording() -> None:
    result = {"tokensBefore": 142_310, "tokensAfter": 18_020, "keptTurns": 6}
    assert compaction_notice(result) == "Compacted 142k → 18k tokens; kept the last 6 turns; `/context` shows the summary"
    assert compaction_notice({**result, "keptTurns": 1}).endswith("kept the last 1 turn; `/context` shows the summary")
    assert [short_tokens(n) for n in (980, 1000, 1499, 9_960, 10_400)] == ["980", "1k", "1.5k", "10k", "10k"]


def test_a_real_compaction_result_gives_the_notice_and_the_status_line_its_numbers(tmp_path: Path, ama_home: Path) -> None:
    server = WindowServer(100_000, lambda n: f"reply {n}")
    (ama_home / "config.json").write_text(json.dumps({"providers": {"win": server.provider("openai-completions")}}))

    async def go():
        agent, _ = await make_agent(tmp_path, "win/m")
        assert context_status(agent) is None  # nothing measured yet
        for p in ("one", "two", "three", "four"):
            await agent.prompt(p)
        status = context_status(agent)
        result = await agent.compact()
        branch = agent.session.branch()
        first_kept = next(i for i, e in enumerate(branch) if e.id == result["firstKeptEntryId"])
        kept_users = sum(1 for e in branch[first_kept:] if isinstance(e, MessageEntry) and isinstance(e.message, UserMessage))
        await agent.close()
        return status, result, kept_users

    try:
        status, result, kept_users = asyncio.run(go())
    finally:
        server.close()
    assert result["keptTurns"] == kept_users >= 1
    notice = compaction_notice(result)
    assert notice.startswith("Compacted ") and f"kept the last {kept_users} turn" in notice
    assert status is not None and status.contextWindow == 100_000 and 0 < status.tokens < 100_000
    assert status.remainingTokens == 100_000 - status.tokens and status.level == 0
    assert status.estimatedTurnsLeft is not None and status.estimatedTurnsLeft > 0
    assert status.to_json()["percent"] == round(status.tokens / 1000, 1)
