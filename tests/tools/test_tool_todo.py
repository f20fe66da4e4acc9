"""todo: whole-list snapshots in ama.todo custom entries, updates by id, events."""

from __future__ import annotations

import pytest

from ama.tools.todo import make_todo_tool
from tests.tools.helpers import call, fails, text

pytestmark = pytest.mark.anyio
todo = make_todo_tool()

ITEMS = [
    {"id": "1", "text": "Write the parser", "status": "done"},
    {"id": "2", "text": "Test it", "status": "in_progress"},
    {"id": "3", "text": "Document it", "status": "pending"},
]


async def test_set_get_update(ctx, events):
    empty = await call(todo, ctx, action="get")
    assert text(empty) == "The todo list is empty."
    assert empty.details == {"items": []}

    r = await call(todo, ctx, action="set", items=ITEMS)
    assert text(r) == ("Todo list (1/3 done):\n[x] 1. Write the parser\n[~] 2. Test it\n[ ] 3. Document it")
    assert ctx.session.customs == [("ama.todo", {"items": ITEMS})]
    assert events == [{"type": "todo_updated", "items": ITEMS}]

    u = await call(todo, ctx, action="update", id="2", status="done")
    await call(todo, ctx, action="update", id="3", status="in_progress", text="Document it well")
    want = [
        ITEMS[0],
        {**ITEMS[1], "status": "done"},
        {"id": "3", "text": "Document it well", "status": "in_progress"},
    ]
    assert u.details["items"][1]["status"] == "done"
    assert ctx.session.latest_custom("ama.todo") == {"items": want}
    assert len(ctx.session.customs) == 3  # every change is a whole-list snapshot
    assert ctx.session.customs[1][1]["items"][2]["text"] == "Document it"  # snapshots are not shared
    got = await call(todo, ctx, action="get")
    assert got.details == {"items": want}
    assert len(ctx.session.customs) == 3 and len(events) == 3  # get writes nothing


async def test_update_keeps_fields_it_does_not_know(ctx):
    # e.g. planStep, written when a plan is approved
    ctx.session.append_custom(
        "ama.todo", {"items": [{"id": "a", "text": "Step", "status": "pending", "planStep": 1}]}
    )
    r = await call(todo, ctx, action="update", id="a", status="in_progress")
    assert r.details["items"] == [{"id": "a", "text": "Step", "status": "in_progress", "planStep": 1}]


async def test_errors(ctx):
    await call(todo, ctx, action="set", items=ITEMS)
    assert (
        await fails(todo, ctx, action="update", id="9", status="done")
        == "No todo item with id '9' (ids: 1, 2, 3)."
    )
    assert await fails(todo, ctx, action="update", id="1") == (
        "Invalid arguments for todo: action 'update' needs 'status' and/or 'text'"
    )
    assert await fails(todo, ctx, action="update", status="done") == (
        "Invalid arguments for todo: 'id' is required for action 'update'"
    )
    assert (
        await fails(todo, ctx, action="set")
        == "Invalid arguments for todo: 'items' is required for action 'set'"
    )
    dup = [ITEMS[0], {**ITEMS[1], "id": "1"}]
    assert await fails(todo, ctx, action="set", items=dup) == (
        "Invalid arguments for todo: item ids must be unique; repeated: 1"
    )
    assert await fails(todo, ctx, action="set", items=[{"id": "1", "text": "x", "status": "started"}]) == (
        "Invalid arguments for todo: 'items[0].status' must be one of 'pending', 'in_progress', 'done', got 'started'"
    )
    assert await fails(todo, ctx, action="list") == (
        "Invalid arguments for todo: 'action' must be one of 'get', 'set', 'update', got 'list'"
    )
    ctx.session = None
    assert await fails(todo, ctx, action="get") == "The todo list needs a session, and this run has none."
