"""Slash commands of the interactive modes (``/help``, ``/model``, ``/tree``, ...)."""

from __future__ import annotations

from typing import Any

from ama.cli import plan_cmd, tasks_view
from ama.cli.ui import commands as ui_commands
from ama.errors import AmaError


async def run(app: Any, line: str) -> None:
    name, _, arg = line[1:].partition(" ")
    arg = arg.strip()
    handler = COMMANDS.get(name)
    r = app.renderer
    if handler is None and (name.startswith("skill:") or name in app.agent.prompts.names()):
        await app.run_prompt(line)  # a prompt template or /skill:<name>: expanded by the agent
        return
    if handler is None:
        r.line(r.style(f"unknown command /{name}; /help lists them", "31"))
        return
    try:
        await handler(app, arg)
    except AmaError as err:
        r.line(r.style(f"error: {err.message}", "31"))


async def cmd_help(app: Any, arg: str) -> None:
    from ama.cli.interactive import help_text

    app.renderer.line(help_text(app.agent.prompts.help_lines()))


async def cmd_quit(app: Any, arg: str) -> None:
    app.quit = True


async def cmd_model(app: Any, arg: str) -> None:
    a = app.agent
    if not arg and app.ui.full:
        await ui_commands.cmd_model_pick(app)
        return
    if not arg:
        app.renderer.line(f"current: {a.model.ref}")
        for m in a.registry.list():
            mark = "*" if m.ref == a.model.ref else " "
            app.renderer.line(f" {mark} {m.ref}")
        return
    a.set_model(arg)
    app.renderer.line(f"model: {a.model.ref}")


async def cmd_thinking(app: Any, arg: str) -> None:
    a = app.agent
    if arg:
        a.set_thinking_level(arg)
    app.renderer.line(f"thinking: {a.thinking_level}")


async def cmd_resume(app: Any, arg: str) -> None:
    target = arg or await app._pick_session()
    if target is not None:  # None: the picker was cancelled
        await app._switch(target)


async def cmd_clear(app: Any, arg: str) -> None:
    await app._switch("memory" if app.args.no_session else "new")


async def cmd_name(app: Any, arg: str) -> None:
    if not arg:
        app.renderer.line(f"name: {app.agent.session.name or '(none)'}")
        return
    app.agent.session.set_name(arg)
    app.renderer.line(f"named: {arg}")


async def cmd_session(app: Any, arg: str) -> None:
    from ama.session.history import count

    a = app.agent
    s = a.session
    c = count(s.entries)
    r = app.renderer
    r.line(f"session  {s.id}")
    r.line(f"file     {s.path or '(in memory)'}")
    r.line(f"cwd      {s.cwd}")
    r.line(f"model    {a.model.ref} · thinking {a.thinking_level} · permissions {a.permissions.mode}")
    r.line(f"entries  {c.entries} · user {c.user} · assistant {c.assistant} · tool results {c.tool_results}")
    from ama.agent.usage_stats import describe, usage_by_kind

    for line in describe(usage_by_kind(s.entries)):  # the whole file, as ama stats counts it
        r.line(line)
    if (tasks := tasks_view.session_line(a)) is not None:
        r.line(tasks)


def _label(e: Any) -> str:
    from ama.messages import AssistantMessage, TextContent, ToolCall, text_of

    if e.type == "message":
        m = e.message
        role = type(m).__name__.replace("Message", "").lower()
        if isinstance(m, AssistantMessage):
            text = " ".join(b.text for b in m.content if isinstance(b, TextContent))
            calls = [b.name for b in m.content if isinstance(b, ToolCall)]
            return f"assistant: {text[:50]}" + (f" [{', '.join(calls)}]" if calls else "")
        content = getattr(m, "content", "")
        return f"{role}: {text_of(content)[:60]}"
    return e.type


async def cmd_tree(app: Any, arg: str) -> None:
    """Show user/assistant turns as a tree (branches indented); ``/tree ID`` moves the leaf."""
    s = app.agent.session
    if arg:
        if app.agent.busy:
            app.renderer.line("busy: wait for the run to finish")
            return
        s.navigate(arg)
        app.renderer.line(f"moved to {arg}; the next prompt continues from there")
        return
    tree = s.tree
    on_path = set(tree.path_ids())
    r = app.renderer

    def visible(eid: str) -> bool:
        return tree.by_id[eid].type == "message"

    def walk(eid: str | None, depth: int) -> None:
        kids = tree.children(eid)
        for k in kids:
            shown = visible(k)
            if shown:
                mark = "●" if k in on_path else "○"
                leaf = "  ← leaf" if k == tree.leaf_id else ""
                label = " ".join(_label(tree.by_id[k]).split())
                r.line(f"{'  ' * depth}{mark} {k} {label[:80]}{leaf}")
            walk(k, depth + (1 if shown and len(kids) > 1 else 0))

    walk(None, 0)


async def cmd_rewind(app: Any, arg: str) -> None:
    """``/rewind`` lists the points; ``/rewind N [both|conversation|code]`` goes back to
    before user message N (default: both when it has a checkpoint, else conversation)."""
    a = app.agent
    r = app.renderer
    points = a.rewind_points()
    if not points:
        r.line("Nothing to rewind to yet.")
        return
    parts = arg.split()
    if not parts and app.ui.full:
        from ama.cli.ui.rewind_panel import rewind_panel

        await rewind_panel(app)
        return
    if not parts:
        for i, p in enumerate(points, 1):
            files = ""
            if p["hasCheckpoint"]:
                dry = await a.rewind(p["entryId"], "code", dry_run=True)
                code = dry["code"]
                n = len(code["restored"]) + len(code["deleted"])
                files = f"  {n} file{'s' if n != 1 else ''} +{code['insertions']} -{code['deletions']}" if n else "  no code changes"
            text = " ".join(p["text"].split())[:70]
            r.line(f"  {i:>2}. {text}{r.style(files, '2')}")
        r.line("/rewind N [both|conversation|code] goes back to before message N")
        return
    if not parts[0].isdigit() or not 1 <= int(parts[0]) <= len(points):
        r.line(r.style(f"no rewind point {parts[0]!r}; choose 1-{len(points)}", "31"))
        return
    point = points[int(parts[0]) - 1]
    mode = parts[1] if len(parts) > 1 else ("both" if point["hasCheckpoint"] else "conversation")
    res = await a.rewind(point["entryId"], mode)
    code = res.get("code")
    if code:
        msg = f"restored {len(code['restored'])} file(s), deleted {len(code['deleted'])}"
        if code["conflicts"]:
            msg += f"; left {len(code['conflicts'])} changed outside ama alone: {', '.join(code['conflicts'])}"
        if code["skipped"]:
            msg += "; skipped " + ", ".join(f"{s['path']} ({s['reason']})" for s in code["skipped"])
        r.line(msg)
    hint = res.get("gitHint")
    if hint:
        r.line(r.style(
            f"git HEAD moved since then ({hint['recordedHead'][:8]} -> {hint['currentHead'][:8]}); ama left git alone. "
            f"See: git log --oneline {hint['recordedHead'][:8]}..HEAD", "33"))  # fmt: skip
    if "conversation" in res:
        app.draft = res["conversation"]["draft"]["text"]
        r.line(f"back to before message {parts[0]}; its text is in the input")


#: the handler of every name in the catalog (``ama.agent.commands``), aliases included
COMMANDS = {
    "help": cmd_help,
    "quit": cmd_quit,
    "exit": cmd_quit,
    "model": cmd_model,
    "thinking": cmd_thinking,
    "resume": cmd_resume,
    "clear": cmd_clear,
    "new": cmd_clear,
    "name": cmd_name,
    "session": cmd_session,
    "tree": cmd_tree,
    "rewind": cmd_rewind,
    "plan": plan_cmd.cmd_plan,
    "tasks": tasks_view.cmd_tasks,
    "fork": ui_commands.cmd_fork,
    "archive": ui_commands.cmd_archive,
    "search": ui_commands.cmd_search,
    "export": ui_commands.cmd_export,
    "cost": ui_commands.cmd_cost,
    "compact": ui_commands.cmd_compact,
    "context": ui_commands.cmd_context,
}
