"""Slash commands of the interactive UI added with the terminal UI (``cli/slash.py`` maps
their names): ``/fork``, ``/archive``, ``/search``, ``/export``, ``/cost``, ``/compact``,
the ``/model`` picker, and ``!command`` (a shell command run directly)."""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

from ama.errors import InvalidArguments
from ama.messages import BashExecutionMessage

EXPORT_FORMATS = ("md", "json", "jsonl")
#: output of a ``!command`` kept for the model (the screen shows it all)
SHELL_NOTE_CHARS = 20_000


def _root(app: Any) -> str:
    from ama.config.paths import sessions_dir

    return str(sessions_dir(app.args.session_dir))


def _short(app: Any, sid: str) -> str:
    from ama.session.shortid import short_session_id

    return short_session_id(_root(app), sid)


def _need_file(app: Any, what: str) -> str:
    path = app.agent.session.path
    if path is None:
        raise InvalidArguments(f"{what} needs a session file; this session is in memory (--no-session)")
    return str(path)


async def cmd_fork(app: Any, arg: str) -> None:
    """Copy this conversation into a new session and continue there (this one stays)."""
    _need_file(app, "/fork")
    old = app.agent.session.id
    res = app.agent.fork(arg or None)
    app.renderer.line(f"forked session {_short(app, old)} into {_short(app, res['sessionId'])}; continuing in the fork")
    await app._switch(res["sessionFile"])


async def cmd_archive(app: Any, arg: str) -> None:
    """Archive this session (or session ID) and, for this one, start a new session."""
    from ama.session.archive import set_archived

    current = not arg
    ref = _need_file(app, "/archive") if current else arg
    if current:  # leave it first: a session this process writes cannot be archived
        await app._switch("memory" if app.args.no_session else "new")
    res = set_archived(_root(app), ref, True)
    extra = f" (and {len(res['lineage'])} forked session(s) by lineage)" if res.get("lineage") else ""
    app.renderer.line(f"archived session {_short(app, res['id'])}{extra}; `ama sessions unarchive` brings it back")


async def cmd_search(app: Any, arg: str) -> None:
    """Search this workspace's sessions; choosing a hit resumes its session."""
    from ama.cli.util import local_time
    from ama.index.hits import search_page
    from ama.index.pattern import Pattern
    from ama.index.search import SearchQuery

    r = app.renderer
    if not arg:
        raise InvalidArguments("/search needs a pattern: /search TEXT")
    q = SearchQuery(Pattern(arg), project=app.agent.cwd, limit=20)
    hits, _more = await asyncio.get_running_loop().run_in_executor(None, lambda: search_page(_root(app), q, no_cache=False))
    if not hits:
        r.line(f"No matches for {arg!r} in this workspace's sessions.")
        return
    items = []
    for h in hits:
        snip, _, _ = h.snippet(70)
        role = ("user", "assistant", "tool")[h.role]
        items.append(f"{h.short:<9} {local_time(h.timestamp, seconds=False)}  {role:<9} {' '.join(snip.split())}")
    i = await app.ui.pick(items, default=0, title=f"{len(hits)} match(es) for {arg!r}: Enter resumes that session")
    if i is None:
        return
    hit = hits[i]
    if hit.path == app.agent.session.path:
        r.line("that is this session")
        return
    await app._switch(hit.path)


async def cmd_export(app: Any, arg: str) -> None:
    """``/export [md|json|jsonl] [FILE]``: write this session (paths replaced by <workspace>
    and ~) to a new file; the default name is ``ama-SESSION-TIME.FORMAT`` here."""
    from ama.export import export_session, write_new

    parts = arg.split()
    fmt = parts[0] if parts else "md"
    if fmt not in EXPORT_FORMATS:
        raise InvalidArguments(f"/export format must be one of {', '.join(EXPORT_FORMATS)}, not {fmt!r}")
    path = _need_file(app, "/export")
    out = parts[1] if len(parts) > 1 else f"ama-{_short(app, app.agent.session.id)}-{time.strftime('%Y%m%d-%H%M%S')}.{fmt}"
    out = os.path.join(app.agent.cwd, os.path.expanduser(out))
    if os.path.lexists(out):
        raise InvalidArguments(f"{out} already exists; ama never overwrites it: /export {fmt} OTHER-FILE")
    content = export_session(path, fmt)
    write_new(out, content)
    app.renderer.line(f"exported this session ({fmt}, {len(content)} bytes) to {out}")


async def cmd_cost(app: Any, arg: str) -> None:
    from ama.cli.ui.status import context_percent, session_cost

    r = app.renderer
    a = app.agent
    cost = session_cost(a)
    pct = context_percent(a)
    r.line(r.usage_line(app.assistants) + " (since this UI opened)")
    r.line("session cost: " + (f"${cost:.4f}" if cost is not None else "unknown (the model has no prices)"))
    if pct is not None:
        r.line(f"context: {pct:.0f}% of {a.model.context_window} tokens")


async def cmd_compact(app: Any, arg: str) -> None:
    """``/compact [FOCUS]``: summarize the older part of the conversation now; Esc (or
    Ctrl-C) cancels it and leaves the session as it was."""
    from ama.errors import AmaError

    r = app.renderer
    r.line(r.style("compacting… (Esc cancels)", "2"))
    app.compacting = True  # Ctrl-C as a signal (--line) aborts it too
    try:
        with app.ui.watch(lambda _ctrl_c: app.agent.abort()):
            await app.agent.compact(arg or None)  # the renderer prints compaction_end's notice
    except AmaError as err:
        if err.code == "busy":  # the rest ended in compaction_end, which the renderer showed
            r.line(r.style(err.message, "31"))
    finally:
        app.compacting = False


async def cmd_context(app: Any, arg: str) -> None:
    """``/context``: the context's size and the latest compaction's summary on the branch."""
    from ama.agent.context_status import context_status, short_tokens
    from ama.session.entries import CompactionEntry

    r = app.renderer
    st = context_status(app.agent)
    if st is None:
        r.line("context: no model request yet")
    else:
        left = f", about {st.estimatedTurnsLeft} turns left" if st.estimatedTurnsLeft is not None else ""
        r.line(f"context  {short_tokens(st.tokens)} of {short_tokens(st.contextWindow)} tokens ({st.percent:.0f}%){left}")
    comps = [e for e in app.agent.session.branch() if isinstance(e, CompactionEntry)]
    if not comps:
        r.line("no compaction on this branch")
        return
    last = comps[-1]
    r.line(r.style(f"latest compaction ({len(comps)} on this branch), {short_tokens(last.tokens_before)} tokens before:", "2"))
    for line in (last.summary or "").splitlines():
        r.line("  " + line)


async def cmd_model_pick(app: Any) -> None:
    a = app.agent
    models = [m.ref for m in a.registry.list()]
    if not models:
        app.renderer.line(f"current: {a.model.ref} (no other models configured)")
        return
    default = models.index(a.model.ref) if a.model.ref in models else 0
    i = await app.ui.pick(models, default=default, title=f"Model (now {a.model.ref}):")
    if i is None:
        return
    a.set_model(models[i])
    app.renderer.line(f"model: {a.model.ref}")


async def run_shell(app: Any, command: str) -> None:
    """``!command``: run it in the workspace (not sandboxed, not asked: you typed it), show
    its output, record it in the session, and tell the model on the next prompt."""
    r = app.renderer
    a = app.agent
    if not command.strip():
        r.line("!COMMAND runs a shell command here; its output is shown to the model with your next prompt")
        return
    proc = await asyncio.create_subprocess_exec(
        "bash", "-c", command, cwd=a.cwd, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    out_b, _ = await proc.communicate()
    out = out_b.decode("utf-8", "replace")
    code = proc.returncode
    for line in out.rstrip("\n").splitlines()[-200:]:
        r.line(line)
    r.line(r.style(f"(exit {code})", "2" if code == 0 else "31"))
    kept = out if len(out) <= SHELL_NOTE_CHARS else out[-SHELL_NOTE_CHARS:]
    # pi's record of a user-run command: the next request shows it to the model ("Ran `cmd`",
    # ai/convert.py), a resumed session still has it, and pi reads it as its own
    a.session.append_message(
        BashExecutionMessage(
            command=command,
            output=kept.rstrip("\n"),
            exit_code=code,
            truncated=len(out) > SHELL_NOTE_CHARS,
            timestamp=int(time.time() * 1000),
        )
    )
