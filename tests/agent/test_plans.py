"""Plan mode in process: the block format, reminders, exit note, resume, [DONE:<step>] progress."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from ama.agent import plans as P
from ama.errors import AmaError
from ama.session.entries import CustomMessageEntry
from tests.agent.helpers import make_agent, write_script

PLAN = "<proposed_plan>\n# Tidy up\n\n1. Remove dead code {id=dead}\n2. Run the tests {dependsOn=dead agent=tester}\n</proposed_plan>"


def test_block_steps_title_and_file_name() -> None:
    text = "intro\n<proposed_plan>\n# Fix: the *parser*\n\n- [ ] read it\n  - nested, not a step\n- fix {it}\n```\n1. code, not a step\n```\n</proposed_plan>"
    block = P.find_plan_block(text)
    assert block is not None and block.startswith("# Fix")
    assert P.find_plan_block("no block here") is None and P.find_plan_block("<proposed_plan>\n</proposed_plan>") is None
    steps = P.parse_steps(block)
    assert [(s.id, s.text) for s in steps] == [("1", "read it"), ("2", "fix {it}")]
    assert P.title_of(block) == "Fix: the *parser*"
    assert P.plan_file_name(P.title_of(block), 3) == "fix-the-parser-v3.md"
    parsed = P.parse_steps(P.find_plan_block(PLAN) or "")
    assert [s.to_json() for s in parsed] == [
        {"id": "dead", "text": "Remove dead code"},
        {"id": "2", "text": "Run the tests", "dependsOn": ["dead"], "agent": "tester"},
    ]
    assert [s.id for s in P.parse_steps("1. a\n1. b")] == ["1", "1-2"]


def test_done_marks_advance_the_list() -> None:
    items = P.todo_items(P.parse_steps("1. a\n2. b\n3. c"))
    assert [i["status"] for i in items] == ["in_progress", "pending", "pending"]
    after = P.advance(items, P.done_marks("did a\n[DONE:1]\n"))
    assert after is not None and [i["status"] for i in after] == ["done", "in_progress", "pending"]
    assert P.advance(after, ["nope"]) is None


def _notes(agent) -> list[str]:
    return [e.custom_type + (":short" if e.content == P.PLAN_MODE_SHORT else "") for e in agent.session.branch()
            if isinstance(e, CustomMessageEntry)]  # fmt: skip


def test_reminders_exit_note_and_resume(tmp_path: Path, ama_home: Path) -> None:
    model = write_script(tmp_path / "s.json", ["thinking about it"] * 7 + [PLAN, "ok"], mode="sequence")

    async def go():
        agent, _ = await make_agent(tmp_path, model, permission_mode="plan")
        for i in range(7):
            await agent.prompt(f"look {i}")
        notes = _notes(agent)
        await agent.prompt("propose")
        pending = agent.plans.pending()
        path = agent.session.path
        await agent.close()
        told, _ = await make_agent(tmp_path, model, session=path, permission_mode="auto-edit")
        explicit = told.permissions.mode
        await told.close()
        again, _ = await make_agent(tmp_path, model, session=path)
        resumed = (again.permissions.mode, again.plans.pending())
        again.set_permission_mode("default")
        await again.prompt("do it yourself")
        exit_notes = _notes(again)
        with pytest.raises(AmaError) as err:
            again.plans.respond("plan-missing", "approve")
        await again.close()
        return notes, pending, resumed, exit_notes, err.value, explicit

    notes, pending, resumed, exit_notes, err, explicit = asyncio.run(go())
    assert explicit == "auto-edit"  # an explicit mode on resume wins
    assert notes == ["ama.plan_mode", "ama.plan_mode:short"]  # full first, short after 5 prompts
    assert pending is not None and pending.title == "Tidy up" and pending.version == 1
    assert resumed[0] == "plan" and resumed[1] is not None and resumed[1].id == pending.id
    assert exit_notes[-1] == "ama.plan_mode_exit"
    assert err.code == "plan_not_found" and "plan-missing" in err.message


def test_done_lines_without_todo_tool(tmp_path: Path, ama_home: Path) -> None:
    model = write_script(tmp_path / "s.json", [PLAN, "[DONE:dead]\nRemoved it.", "[DONE:2]\nTests pass."], mode="sequence")

    async def go():
        agent, events = await make_agent(tmp_path, model, permission_mode="plan")
        agent.set_active_tools(["read", "ls", "grep", "find"])
        await agent.prompt("tidy up")
        plan = agent.plans.pending()
        assert plan is not None
        _, task = agent.plans.respond(plan.id, "approve", mode="auto-edit")
        assert task is not None
        await task
        await agent.prompt("next")
        note = next(e.content for e in agent.session.branch()
                    if isinstance(e, CustomMessageEntry) and e.custom_type == P.APPROVED_NOTE)  # fmt: skip
        todos = agent.session.latest_custom("ama.todo")
        mode = agent.permissions.mode
        await agent.close()
        return events, note, todos, mode

    events, note, todos, mode = asyncio.run(go())
    assert "[DONE:<step id>]" in str(note) and "Tidy up" in str(note)
    assert mode == "auto-edit"
    assert [i["status"] for i in todos["items"]] == ["done", "done"]
    assert [[i["status"] for i in e["items"]] for e in events if e["type"] == "todo_updated"] == [
        ["in_progress", "pending"], ["done", "in_progress"], ["done", "done"],
    ]  # fmt: skip


def test_rewind_and_fork_keep_plans_consistent(tmp_path: Path, ama_home: Path) -> None:
    other = PLAN.replace("# Tidy up", "# Tidy up more")
    model = write_script(tmp_path / "s.json", ["looked", PLAN, other, "[DONE:dead]\nRemoved it in the fork."],
                         mode="sequence")  # fmt: skip

    async def go():
        agent, _ = await make_agent(tmp_path, model, permission_mode="plan")
        await agent.prompt("look around")
        await agent.prompt("propose")
        first = agent.plans.pending()
        assert first is not None
        fork = agent.fork()  # the fork copies the branch, with the pending plan
        point = agent.rewind_points()[-1]["entryId"]  # before "propose"
        await agent.rewind(point, "conversation")
        after_rewind = (agent.plans.pending(), agent.plans.get(first.id))
        await agent.prompt("propose again")
        again = agent.plans.pending()
        await agent.close()

        forked, _ = await make_agent(tmp_path, model, session=fork["sessionFile"])
        in_fork = (forked.permissions.mode, forked.plans.pending())
        _, task = forked.plans.respond(first.id, "approve", mode="auto-edit")
        assert task is not None
        await task
        fork_todos = forked.session.latest_custom("ama.todo")
        fork_plan = forked.plans.get(first.id)
        await forked.close()
        return first, after_rewind, again, in_fork, fork_todos, fork_plan

    first, after_rewind, again, in_fork, fork_todos, fork_plan = asyncio.run(go())
    assert after_rewind == (None, None)  # the proposal is off the active branch now
    assert again is not None and again.id != first.id and again.version == 1 and again.title == "Tidy up more"
    # a fork copies the plan records with the branch, not plan mode (ama.plan_state is runtime state)
    assert in_fork[0] == "default" and in_fork[1] is not None and in_fork[1].id == first.id
    assert fork_plan is not None and fork_plan.status == "approved"
    assert [i["status"] for i in fork_todos["items"]] == ["done", "in_progress"]


def test_sdk_approve_compact_goes_through_answer(tmp_path: Path, ama_home: Path) -> None:
    model = write_script(tmp_path / "s.json", [PLAN, "A summary of the planning.", "Done."], mode="sequence")

    async def go():
        agent, _ = await make_agent(tmp_path, model, permission_mode="plan")
        await agent.prompt("tidy up")
        plan = agent.plans.pending()
        assert plan is not None
        with pytest.raises(AmaError) as err:
            agent.plans.respond(plan.id, "approve_compact")
        data, task = await agent.plans.answer(plan.id, "approve_compact", mode="auto-edit")
        assert task is not None
        result = await task
        kinds = [e.custom_type if isinstance(e, CustomMessageEntry) else e.type for e in agent.session.branch()]
        mode = agent.permissions.mode
        await agent.close()
        return err.value, data, result, kinds, mode

    err, data, result, kinds, mode = asyncio.run(go())
    assert err.code == "unsupported" and "answer" in err.message
    assert data["compacted"] is True and data["mode"] == mode == "auto-edit"
    assert kinds.index("compaction") < kinds.index(P.APPROVED_NOTE)
    assert result.text == "Done."
