"""``[task:<agent>]`` lines and ``/tasks`` in the interactive modes (cli/tasks_view.py)."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from types import SimpleNamespace

from ama.cli import tasks_view
from ama.cli.render import Renderer
from tests.agent.helpers import make_agent, write_script


def test_live_lines_and_the_tasks_command(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".ama").mkdir(parents=True)
    (ws / "a.txt").write_text("hello\n")
    child = write_script(tmp_path / "c.json", [{"toolCalls": [{"name": "read", "arguments": {"path": "a.txt"}}]}, "a.txt: hello"], mode="sequence")
    (ws / ".ama" / "config.json").write_text(json.dumps({"tasks": {"exploreModel": child}}))
    call = {"name": "task", "arguments": {"agent": "explore", "description": "read a", "prompt": "read a.txt"}}
    parent = write_script(tmp_path / "p.json", [{"toolCalls": [call]}, "ok"], mode="sequence")
    out = io.StringIO()

    async def main() -> tuple[str, str]:
        agent, _ = await make_agent(ws, parent)
        app = SimpleNamespace(agent=agent, renderer=Renderer(out, color=False))
        tasks_view.attach(app, agent)
        try:
            await agent.prompt("go")
            live = out.getvalue()
            out.truncate(0)
            out.seek(0)
            await tasks_view.cmd_tasks(app, "")
            task_id = next(iter(agent.tasks.registry.tasks))
            await tasks_view.cmd_tasks(app, task_id[:4])
            await tasks_view.cmd_tasks(app, "zzzz")
            assert tasks_view.session_line(agent) is not None
        finally:
            await agent.close()
        return live, out.getvalue()

    live, listing = asyncio.run(main())
    lines = live.splitlines()
    assert lines[0].startswith("[task:explore] read a · ")
    assert "[task:explore]   ● read" in lines
    assert lines[-1].startswith("[task:explore] completed · 2 turns · $0.0000")
    assert "completed   explore" in listing and "read a · read a.txt" in listing
    assert "User: read a.txt" in listing and "Assistant: a.txt: hello" in listing
    assert "no task 'zzzz'" in listing


def test_an_approval_from_a_task_is_labelled() -> None:
    agent = SimpleNamespace(tasks=None)
    ev = {"type": "permission_request", "toolName": "bash", "context": {"depth": 1, "taskId": "abc"}}
    assert tasks_view.event_line(agent, ev) == "[task:?] a sub-agent asks for approval:"
    assert tasks_view.event_line(agent, {"type": "permission_request", "toolName": "bash"}) is None
