"""The two steps of ``build_agent`` (agent/compose.py): what the first settles is what the
agent the second makes reports; the first raises every error that stops a start."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from ama.agent.compose import AgentOptions, build_agent, finish_agent, prepare_agent
from ama.errors import InvalidArguments
from ama.permissions import check_mode
from tests.agent.helpers import write_script


def _config(home: Path) -> None:
    models = [{"id": "m", "contextWindow": 100000, "maxTokens": 4096}]
    local = {"api": "openai-completions", "baseUrl": "http://127.0.0.1:9/v1", "apiKey": "x", "models": models}
    providers = {"local": local, "chan": {**local, "channel": "beta"}}
    (home / "config.json").write_text(json.dumps({"providers": providers, "thinkingLevel": "medium"}))


def test_draft_state_is_the_agents(tmp_path: Path, ama_home: Path) -> None:
    _config(ama_home)
    for kw in (
        {"model": "local/m"},
        {"model": "chan/m", "session": "memory", "thinking": "high"},
        {"model": "local/m", "permission_mode": "auto", "session_dir": str(tmp_path / "s")},
    ):
        draft = prepare_agent(AgentOptions(cwd=str(tmp_path), **kw))  # type: ignore[arg-type]
        early = draft.state()
        agent, _ = finish_agent(draft)
        assert early is not None and early == agent.state(), kw
        asyncio.run(agent.close())


def test_no_draft_state_where_building_may_change_it(tmp_path: Path, ama_home: Path) -> None:
    """Plan mode (plan.model may replace the model) is answered by the finished agent only;
    a resumed session that does not go back into plan mode is known from the draft
    (tests/rpc/test_rpc_start.py has one that does)."""
    _config(ama_home)
    draft = prepare_agent(AgentOptions(cwd=str(tmp_path), model="local/m", permission_mode="plan"))
    assert draft.state() is None
    draft.session.close()
    model = write_script(tmp_path / "s.json", ["hi"])
    agent, _ = build_agent(AgentOptions(cwd=str(tmp_path), model=model))
    asyncio.run(agent.prompt("hello"))
    path = agent.session.path
    asyncio.run(agent.close())
    draft = prepare_agent(AgentOptions(cwd=str(tmp_path), session=str(path)))
    early = draft.state()
    agent, _ = finish_agent(draft)
    assert agent.state()["sessionFile"] == path and agent.state()["leafId"] is not None
    assert early == agent.state()
    asyncio.run(agent.close())


def test_first_step_raises_what_stops_a_start(tmp_path: Path, ama_home: Path) -> None:
    _config(ama_home)
    with pytest.raises(InvalidArguments) as bad_mode:
        prepare_agent(AgentOptions(cwd=str(tmp_path), model="local/m", permission_mode="yolo"))
    with pytest.raises(InvalidArguments) as same:
        check_mode("yolo")
    assert bad_mode.value.message == same.value.message
    with pytest.raises(InvalidArguments, match="sandbox must be one of"):
        prepare_agent(AgentOptions(cwd=str(tmp_path), model="local/m", sandbox="maybe"))
    with pytest.raises(InvalidArguments, match="unknown model"):
        prepare_agent(AgentOptions(cwd=str(tmp_path), model="local/m", fallback_model="local/x"))


def test_build_agent_warnings_are_both_steps_in_order(tmp_path: Path, ama_home: Path) -> None:
    models = [{"id": "m", "contextWindow": 100000, "maxTokens": 4096}]
    local = {"api": "openai-completions", "baseUrl": "http://127.0.0.1:9/v1", "apiKey": "x", "models": models}
    config = {"providers": {"local": local}, "noSuchKey": 1, "permissions": {"allow": ["bash("]}}
    (ama_home / "config.json").write_text(json.dumps(config))
    agent, warnings = build_agent(AgentOptions(cwd=str(tmp_path), model="local/m", session="memory"))
    asyncio.run(agent.close())
    assert len(warnings) == 2
    assert "noSuchKey" in warnings[0] and warnings[1].startswith("permissions.allow[0]: bad rule")
