"""Reminders (agent/reminders.py): one test per source, placement, and the off switches."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from ama.agent.guard import Limits
from ama.messages import TextContent, ToolResultMessage, UserMessage
from ama.session.entries import CustomMessageEntry, MessageEntry
from tests.agent.helpers import make_agent, write_script


def run(coro):
    return asyncio.run(coro)


def reminder_entries(agent) -> list[CustomMessageEntry]:
    return [e for e in agent.session.entries if isinstance(e, CustomMessageEntry) and e.custom_type == "ama.reminder"]


def results(agent) -> list[ToolResultMessage]:
    return [e.message for e in agent.session.entries if isinstance(e, MessageEntry) and isinstance(e.message, ToolResultMessage)]


def tail_text(m: ToolResultMessage) -> str:
    last = m.content[-1]
    return last.text if isinstance(last, TextContent) and last.text.startswith("<system-reminder>") else ""


def config(home: Path, **reminders: Any) -> None:
    (home / "config.json").write_text(json.dumps({"reminders": reminders}))


def test_changed_file_is_reported_once_on_the_last_result_of_the_batch(tmp_path: Path, ama_home: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    model = write_script(
        tmp_path / "s.json",
        [
            {"toolCalls": [{"name": "read", "arguments": {"path": "a.txt"}}]},
            {"toolCalls": [{"name": "bash", "arguments": {"command": "sleep 0.02; echo two > a.txt"}}, {"name": "ls", "arguments": {}}]},
            {"toolCalls": [{"name": "ls", "arguments": {}}]},
            "done",
        ],
    )

    async def go():
        agent, _ = await make_agent(tmp_path, model, permission_mode="full-auto", sandbox="off")
        await agent.prompt("go")
        await agent.close()
        return agent

    agent = run(go())
    read, bash, ls1, ls2 = results(agent)
    assert tail_text(read) == "" and tail_text(bash) == ""  # not the last of its batch
    text = tail_text(ls1)
    assert "Files you read changed on disk since: a.txt" in text and text.endswith("</system-reminder>")
    assert tail_text(ls2) == ""  # said once
    assert reminder_entries(agent) == []  # during a run: no entry of its own


def test_todo_and_changed_files_are_restated_before_a_new_prompt(tmp_path: Path, ama_home: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    items = [{"id": "1", "text": "write the parser", "status": "in_progress"}, {"id": "2", "text": "ship", "status": "done"}]
    model = write_script(
        tmp_path / "s.json",
        [
            {"toolCalls": [{"name": "todo", "arguments": {"action": "set", "items": items}}, {"name": "read", "arguments": {"path": "a.txt"}}]},
            "planned",
            "second",
            "third",
        ],
    )

    async def go():
        agent, _ = await make_agent(tmp_path, model, permission_mode="full-auto", sandbox="off")
        await agent.prompt("plan")
        time.sleep(0.02)
        (tmp_path / "a.txt").write_text("changed by the user\n")
        await agent.prompt("next")
        await agent.prompt("and next")
        await agent.close()
        return agent

    agent = run(go())
    rem = reminder_entries(agent)
    assert len(rem) == 1 and rem[0].display is False  # the third prompt has nothing new to say
    text = str(rem[0].content)
    assert text.startswith("<system-reminder>\n") and text.endswith("\n</system-reminder>")
    assert "- [in_progress] 1: write the parser" in text and "ship" not in text
    assert "a.txt" in text
    branch = agent.session.branch()
    at = branch.index(rem[0])
    after = branch[at + 1]
    assert isinstance(after, MessageEntry) and isinstance(after.message, UserMessage) and after.message.content == "next"
    # in the context the reminder is the newest message before the prompt
    ctx = agent.session.context()
    assert any(getattr(m, "custom_type", None) == "ama.reminder" for m in ctx.messages)


def test_background_job_exit_is_reported_before_the_next_prompt(tmp_path: Path, ama_home: Path) -> None:
    model = write_script(
        tmp_path / "s.json",
        [{"toolCalls": [{"name": "bash", "arguments": {"command": "sleep 0.3; exit 3", "background": True}}]}, "started", "ok"],
    )

    async def go():
        agent, _ = await make_agent(tmp_path, model, permission_mode="full-auto", sandbox="off")
        await agent.prompt("start it")
        for _ in range(200):
            if not agent.jobs.running():
                break
            await asyncio.sleep(0.02)
        await agent.prompt("what happened")
        await agent.close()
        return agent

    agent = run(go())
    texts = [str(e.content) for e in reminder_entries(agent)]
    assert any("Background command bg1 (`sleep 0.3; exit 3`) exited with code 3" in t for t in texts), texts


def test_context_usage_is_reported_at_70_percent(tmp_path: Path, ama_home: Path) -> None:
    model = write_script(
        tmp_path / "s.json",
        [{"text": "big", "usage": {"input": 3600, "output": 10}}, "ok"],
        contextWindow=5000,  # the tool definitions alone are ~2,500 tokens
        maxTokens=100,
    )

    async def go():
        agent, _ = await make_agent(tmp_path, model, system_prompt="sys")
        await agent.prompt("one")
        await agent.prompt("two")
        await agent.close()
        return agent

    agent = run(go())
    texts = [str(e.content) for e in reminder_entries(agent)]
    assert len(texts) == 1 and "Context window: 7" in texts[0] and "tokens left" in texts[0]


def test_budget_remaining_is_reported_during_the_run(tmp_path: Path, ama_home: Path) -> None:
    ls = {"toolCalls": [{"name": "ls", "arguments": {}}]}
    model = write_script(tmp_path / "s.json", [ls, ls, ls, "done"])

    async def go():
        agent, _ = await make_agent(tmp_path, model, permission_mode="full-auto", limits=Limits(max_turns=4))
        await agent.prompt("list")
        await agent.close()
        return agent

    agent = run(go())
    tails = [tail_text(m) for m in results(agent)]
    assert tails[0] == "" and tails[1] == ""
    assert "Budget: 3 of 4 model calls used (1 left)" in tails[2]


def test_each_source_has_an_off_switch(tmp_path: Path, ama_home: Path) -> None:
    config(ama_home, todo=False, changedFiles=False, contextUsage=False, budget=False, backgroundJobs=False)
    (tmp_path / "a.txt").write_text("one\n")
    items = [{"id": "1", "text": "x", "status": "pending"}]
    model = write_script(
        tmp_path / "s.json",
        [
            {"toolCalls": [{"name": "todo", "arguments": {"action": "set", "items": items}}]},
            {"toolCalls": [{"name": "read", "arguments": {"path": "a.txt"}}, {"name": "bash", "arguments": {"command": "sleep 0.02; echo 2 > a.txt"}}]},
            {"toolCalls": [{"name": "ls", "arguments": {}}]},
            {"text": "big", "usage": {"input": 1900, "output": 10}},
            "ok",
        ],
        contextWindow=2000,
    )

    async def go():
        agent, _ = await make_agent(tmp_path, model, permission_mode="full-auto", sandbox="off", limits=Limits(max_turns=5))
        await agent.prompt("go")
        await agent.prompt("again")
        await agent.close()
        return agent

    agent = run(go())
    assert reminder_entries(agent) == []
    assert all(tail_text(m) == "" for m in results(agent))
