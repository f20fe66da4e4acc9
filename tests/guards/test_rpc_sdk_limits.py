"""The same budgets over RPC `prompt` options and SDK arguments."""

from __future__ import annotations

import asyncio
from pathlib import Path

from ama.sdk import Limits, create_agent
from tests.agent.helpers import write_script
from tests.rpc.helpers import Rpc

CALLS = [{"toolCalls": [{"name": "ls", "arguments": {"path": str(i)}}]} for i in range(9)]


def test_rpc_prompt_max_turns_option(tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", CALLS)
    rpc = Rpc(tmp_path, "--model", model)
    try:
        bad = rpc.call("prompt", message="go", maxCost="lots")
        assert bad["success"] is False and "maxCost" in bad["error"]["message"] and "lots" in bad["error"]["message"]
        neg = rpc.call("prompt", message="go", maxTurns=0)
        assert neg["success"] is False and "maxTurns must be a positive integer, got 0" in neg["error"]["message"]
        assert rpc.call("prompt", message="go", maxTurns=2)["success"] is True
        hit = rpc.until(lambda m: m.get("type") == "limit_reached")
        assert hit == {"type": "limit_reached", "kind": "turns", "value": 2, "limit": 2}
        settled = rpc.until(lambda m: m.get("type") == "agent_settled")
        assert settled["warning"] == "limit_reached"
    finally:
        rpc.proc.stdin.close()
        rpc.proc.wait(timeout=30)


def test_sdk_arguments_and_per_prompt_limits(tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", CALLS)

    async def go():
        agent = await create_agent(cwd=str(tmp_path), model=model, session="memory", max_turns=3, max_cost=5.0)
        first = await agent.prompt("go")
        second = await agent.prompt("again", limits=Limits(max_turns=1))
        await agent.close()
        return first, second

    first, second = asyncio.run(go())
    assert first.record.limit == {"kind": "turns", "value": 3, "limit": 3} and first.warning == "limit_reached"
    assert second.record.limit == {"kind": "turns", "value": 1, "limit": 1}


def test_sdk_rejects_a_bad_limit_with_its_value(tmp_path: Path) -> None:
    import pytest

    from ama.errors import InvalidArguments

    async def go():
        await create_agent(cwd=str(tmp_path), model=write_script(tmp_path / "s.json", CALLS), max_tokens=-5)

    with pytest.raises(InvalidArguments, match="max_tokens must be a positive integer, got -5"):
        asyncio.run(go())
