"""``/plan`` in the interactive modes, and the plan panel printed when a plan is proposed.

``/plan`` enters plan mode (or shows the pending plan); ``/plan approve [MODE]``,
``/plan fresh [MODE]`` (approve into a new session), ``/plan compact [MODE]`` (compact, then
implement), ``/plan revise FEEDBACK``, ``/plan reject`` answer it; ``/plan off`` leaves plan mode.
docs/plan.md has the rules; the answers go through ``agent.plans.respond``.
"""

from __future__ import annotations

from typing import Any

from ama.cli import plan_panel

USAGE = "/plan [show | approve [MODE] | fresh [MODE] | compact [MODE] | revise FEEDBACK | reject | off]"


def attach(app: Any, agent: Any) -> None:
    """The UI answers proposals itself: show them as a panel, and todo changes as a list."""
    agent.plans.client_answers = lambda: True
    in_todo_tool = [False]  # the todo tool's own result already shows the list

    def on_event(ev: dict[str, Any]) -> None:
        if ev["type"] in ("tool_execution_start", "tool_execution_end"):
            in_todo_tool[0] = ev["type"] == "tool_execution_start" and ev.get("toolName") == "todo"
        elif ev["type"] == "plan_proposed":
            full = getattr(app.ui, "full", False)  # there plan_panel.offer asks when the run settles
            title, version = ev.get("title") or "plan", ev.get("version", 1)
            _panel(app, title, version, ev.get("markdown", ""), ev.get("filePath"), hint=not full)
            plan_panel.on_proposed(app)
        elif ev["type"] == "todo_updated" and not in_todo_tool[0]:
            from ama.tools.todo import render

            app.renderer.line(app.renderer.style(render(ev.get("items") or []), "2"))

    agent.subscribe(on_event)


def _panel(app: Any, title: str, version: int, markdown: str, path: str | None, *, hint: bool = True) -> None:
    r = app.renderer
    plan_panel.render(app, title, version, markdown, path)
    if hint:
        answers = "/plan approve [MODE] · /plan fresh · /plan compact · /plan revise FEEDBACK · /plan reject"
        r.line(r.style(f"answer: {answers}", "36"))


async def cmd_plan(app: Any, arg: str) -> None:
    a = app.agent
    r = app.renderer
    verb, _, rest = arg.partition(" ")
    rest = rest.strip()
    pending = a.plans.pending()
    if verb in ("", "show"):
        if pending is not None:
            _panel(app, pending.title, pending.version, pending.markdown, pending.file_path)
        elif verb == "" and a.permissions.mode != "plan":
            a.set_permission_mode("plan")
            r.line("plan mode: only read-only tools run until you approve a plan (/plan off leaves)")
        else:
            r.line("no plan is waiting for an answer" + (" (plan mode is on)" if a.permissions.mode == "plan" else ""))
        return
    if verb == "off":
        if a.permissions.mode == "plan":
            a.set_permission_mode(a.plans.pre_plan_mode())
        r.line(f"permissions: {a.permissions.mode}")
        return
    if verb not in ("approve", "fresh", "compact", "revise", "reject"):
        r.line(r.style(f"unknown /plan action {verb!r}; use {USAGE}", "31"))
        return
    if pending is None:
        r.line(r.style("no plan is waiting for an answer", "31"))
        return
    if verb == "revise" and not rest:
        rest = (await app.ui.read("what should change? ") or "").strip()
    decision = {"fresh": "approve_fresh", "compact": "approve_compact"}.get(verb, verb)
    data, task = await a.plans.answer(
        pending.id, decision, mode=(rest or None) if verb in ("approve", "fresh", "compact") else None,
        feedback=rest if verb == "revise" else None, allow_fresh=True,
    )  # fmt: skip
    if verb == "fresh":
        plan = a.plans.get(pending.id)
        model = a.model.ref
        await app._switch("memory" if app.args.no_session else "new")
        r.line(f"approved plan v{data['version']} into this new session; permissions: {data['mode']}")
        task = app.agent.plans.begin_fresh(plan, data["mode"], model=model)
    elif verb in ("approve", "compact"):
        how = "" if verb == "approve" else (" after compacting" if data.get("compacted") else " (not compacted)")
        r.line(f"approved plan v{data['version']}{how}; permissions: {data['mode']}")
    elif verb == "reject":
        r.line("rejected; still in plan mode")
    if task is not None:
        with app.ui.watch(app._on_key_interrupt):
            await task
