"""RPC commands: parameter schemas and handlers.  See docs/rpc.md for the table.

A handler is ``async def h(srv, params) -> dict`` returning the response ``data``; it raises
``AmaError`` (``invalid_arguments``, ``busy``, ``not_found``, ``unsupported``, ...) for an
error response.  Parameters are checked against ``SPECS`` before the handler runs.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any

from ama.agent.events import plain
from ama.errors import AmaError, Busy, InvalidArguments
from ama.rpc.jsonl import RawJSON, dumps
from ama.rpc.start import UNSUPPORTED, state_data

if TYPE_CHECKING:
    from ama.rpc.server import RpcServer

Handler = Callable[["RpcServer", dict[str, Any]], Awaitable[dict[str, Any]]]

# param -> (type name, required); types: str, int, bool, list, dict, "str|null"
SPECS: dict[str, dict[str, tuple[str, bool]]] = {}
HANDLERS: dict[str, Handler] = {}
#: returned by a handler that has already written its response
RESPONDED: dict[str, Any] = {"__responded__": True}


def command(name: str, /, **params: tuple[str, bool]) -> Callable[[Handler], Handler]:
    def deco(fn: Handler) -> Handler:
        SPECS[name] = params
        HANDLERS[name] = fn
        return fn

    return deco


def unsupported(name: str, /, **params: tuple[str, bool]) -> None:
    """The handler of a command whose feature is not built yet: it is listed, with why, in
    ``rpc/start.py:UNSUPPORTED``, which ``get_state`` reports also before this module loads."""
    why = UNSUPPORTED[name]

    async def handler(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
        raise AmaError("unsupported", f"{name}: {why}")

    command(name, **params)(handler)


_TYPES: dict[str, Callable[[Any], bool]] = {
    "str": lambda v: isinstance(v, str),
    "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "bool": lambda v: isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "list": lambda v: isinstance(v, list),
    "dict": lambda v: isinstance(v, dict),
    "str|null": lambda v: v is None or isinstance(v, str),
}


def check_params(name: str, msg: dict[str, Any]) -> dict[str, Any]:
    spec = SPECS[name]
    out: dict[str, Any] = {}
    for key, (typ, required) in spec.items():
        if key not in msg:
            if required:
                raise InvalidArguments(f"{name}: missing parameter {key!r} ({typ})")
            continue
        if not _TYPES[typ](msg[key]):
            raise InvalidArguments(f"{name}: parameter {key!r} must be {typ}, got {msg[key]!r:.80}")
        out[key] = msg[key]
    return out


def _images(raw: list | None) -> list | None:
    if not raw:
        return None
    from ama.messages import ImageContent

    out = []
    for i, img in enumerate(raw):
        if not isinstance(img, dict) or not isinstance(img.get("data"), str) or not isinstance(img.get("mimeType"), str):
            raise InvalidArguments(f"images[{i}] must be {{type: 'image', data: base64, mimeType}}")
        out.append(ImageContent(data=img["data"], mime_type=img["mimeType"]))
    return out


# --- prompting ---------------------------------------------------------------------------


@command(
    "prompt",
    message=("str", True),
    images=("list", False),
    streamingBehavior=("str", False),
    maxTurns=("int", False),
    maxCost=("number", False),
    maxTokens=("int", False),
    maxWallTime=("number", False),
)
async def cmd_prompt(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
    from ama.agent.guard import Limits

    agent = srv.agent
    limits = Limits.from_options(p)
    behavior = p.get("streamingBehavior")
    if agent.busy:
        if behavior is None:
            raise Busy("a run is in progress: send streamingBehavior 'steer' or 'followUp', or abort first")
        agent.start(p["message"], _images(p.get("images")), behavior=behavior)
        return {"queued": behavior}
    # answer as soon as the run has begun, in order with its events (after turn_start),
    # naming the command that was sent (steer and follow_up start a run when idle)
    rid, name = srv.current_id, srv.current_command
    begun: asyncio.Future = asyncio.get_running_loop().create_future()

    def on_started() -> None:
        srv.respond(name, rid, {})
        begun.set_result(None)

    task = agent.start(p["message"], _images(p.get("images")), behavior=behavior, started=on_started, limits=limits)
    assert task is not None
    srv.track(task)
    await asyncio.wait({begun, task}, return_when=asyncio.FIRST_COMPLETED)
    if begun.done():
        return RESPONDED
    task.result()  # rejected before it began (e.g. by a UserPromptSubmit hook): raises
    return {}


@command("steer", message=("str", True), images=("list", False))
async def cmd_steer(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
    return await cmd_prompt(srv, {**p, "streamingBehavior": "steer"}) if srv.agent.busy else await cmd_prompt(srv, p)


@command("follow_up", message=("str", True), images=("list", False))
async def cmd_follow_up(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
    return await cmd_prompt(srv, {**p, "streamingBehavior": "followUp"}) if srv.agent.busy else await cmd_prompt(srv, p)


@command("abort")
async def cmd_abort(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
    maintenance = srv.maintenance if srv.maintenance is not None and not srv.maintenance.done() else None
    was = srv.agent.busy or maintenance is not None
    dropped = srv.agent.abort()
    await srv.agent.wait_idle()
    if maintenance is not None:  # a compaction or summary: it answers (aborted) before this does
        await asyncio.wait([maintenance])
    return {"aborted": was, "dropped": [t for t, _ in dropped]}


# --- sessions ---------------------------------------------------------------------------


def _idle(srv: RpcServer, what: str) -> None:
    if srv.agent.busy:
        raise Busy(f"{what}: a run is in progress; abort it or wait for agent_settled")


@command("new_session", parentSession=("str", False))
async def cmd_new_session(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
    _idle(srv, "new_session")
    await srv.switch("new", reason="new")
    return {"sessionId": srv.agent.session.id, "cancelled": False}


@command("switch_session", sessionPath=("str", False), sessionId=("str", False))
async def cmd_switch_session(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
    _idle(srv, "switch_session")
    ref = p.get("sessionPath") or p.get("sessionId")
    if not ref:
        raise InvalidArguments("switch_session: give sessionPath or sessionId")
    await srv.switch(ref, reason="resume")
    return {"sessionId": srv.agent.session.id, "cancelled": False}


@command("get_fork_messages")
async def cmd_get_fork_messages(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
    from ama.agent.views import user_entries_on_branch
    from ama.messages import text_of

    return {"messages": [{"entryId": e.id, "text": text_of(e.message.content)} for e in user_entries_on_branch(srv.agent.session)]}


@command("fork", entryId=("str", True))
async def cmd_fork(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
    """A new session holding the branch up to (not including) a user message; returns the
    message's text for editing, and switches to the new session."""
    from ama.agent.views import user_entries_on_branch
    from ama.messages import text_of
    from ama.session.fork import fork_session

    _idle(srv, "fork")
    s = srv.agent.session
    target = next((e for e in user_entries_on_branch(srv.agent.session) if e.id == p["entryId"]), None)
    if target is None:
        raise InvalidArguments(f"fork: {p['entryId']} is not a user message on the active branch")
    if s.path is None:
        raise AmaError("unsupported", "fork: this session is in memory (no file to fork)")
    parent = s.tree.parent[target.id]
    if parent is None:
        await srv.switch("new", reason="fork")
    else:
        _sid, path = fork_session(s.path, srv.sessions_dir, expected_id=s.id, at=parent)
        await srv.switch(path, reason="fork")
    return {"sessionId": srv.agent.session.id, "text": text_of(target.message.content), "cancelled": False}


@command("set_session_name", name=("str", True))
async def cmd_set_session_name(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
    srv.agent.session.set_name(p["name"])
    return {"name": p["name"]}


@command("get_state")
async def cmd_get_state(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
    return state_data(srv.agent.state(), srv.broker.capabilities)


@command("get_messages")
async def cmd_get_messages(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
    return {"messages": messages_json(e for e in srv.agent.session.branch() if e.type == "message")}


def messages_json(entries: Iterable[Any]) -> RawJSON:
    """``[{"entryId": id, **plain(message)}, ...]`` of message entries as the JSON text
    ``json`` gives (``jsonl.dumps``), byte for byte, in parts that are never joined: each
    message is encoded by msgspec from its struct, unless it holds a float msgspec spells
    otherwise or a value it refuses (then by ``json``, as before).  A 200 MB session:
    ~1.6 s and ~460 MiB, where builtins and ``json`` for all took ~3.5 s and ~700 MiB."""
    import msgspec

    from ama.json_floats import holds_odd_float

    encode = msgspec.json.Encoder().encode
    parts: list[bytes] = []
    for e in entries:
        head = b',{"entryId":' if parts else b'[{"entryId":'
        m = e.message
        body = b""
        if not holds_odd_float(m):
            try:
                body = encode(m)
            except (TypeError, ValueError, OverflowError, msgspec.EncodeError):
                pass
        if not body:
            body = dumps(plain(m))[:-1]  # (the line's own encoding, without its newline)
        parts.append(head + encode(e.id) + (b"}" if body == b"{}" else b"," + body[1:]))
    parts.append(b"]" if parts else b"[]")
    return RawJSON(parts)


@command("get_entries", since=("str|null", False))
async def cmd_get_entries(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
    """Entries after ``since`` (an entry id) in file order; all when absent."""
    from ama.agent.views import entries_since

    return entries_since(srv.agent.session, p.get("since"))


@command("get_tree")
async def cmd_get_tree(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
    from ama.agent.views import tree_nodes

    return tree_nodes(srv.agent.session)


@command("navigate", entryId=("str|null", True))
async def cmd_navigate(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
    _idle(srv, "navigate")
    srv.agent.session.navigate(p["entryId"])
    return {"leafId": srv.agent.session.leaf_id}


@command("set_label", entryId=("str", True), label=("str|null", False))
async def cmd_set_label(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
    srv.agent.session.set_label(p["entryId"], p.get("label"))
    return {"entryId": p["entryId"], "label": p.get("label") or None}


@command("get_last_assistant_text")
async def cmd_get_last_assistant_text(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
    from ama.agent.views import last_assistant_text

    return {"text": last_assistant_text(srv.agent.session)}


@command("get_session_stats")
async def cmd_get_session_stats(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
    return srv.agent.stats()  # with ``telemetry`` (agent/telemetry.py) and the tasks' roll-up


# --- models and modes -------------------------------------------------------------------


@command("set_model", model=("str", False), provider=("str", False), modelId=("str", False))
async def cmd_set_model(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
    ref = p.get("model") or (f"{p['provider']}/{p['modelId']}" if p.get("provider") and p.get("modelId") else None)
    if not ref:
        raise InvalidArguments("set_model: give model ('provider/id') or provider and modelId")
    return {"model": srv.agent.set_model(ref)}


@command("get_available_models")
async def cmd_get_available_models(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
    models = []
    for m in srv.agent.registry.list():
        cost = None
        if m.cost is not None:
            cost = {"input": m.cost.input, "output": m.cost.output, "cacheRead": m.cost.cache_read, "cacheWrite": m.cost.cache_write}
        models.append({"provider": m.provider, "id": m.id, "api": m.api, "contextWindow": m.context_window,
                       "maxTokens": m.max_tokens, "reasoning": m.reasoning, "cost": cost})  # fmt: skip
    return {"models": models}


@command("set_thinking_level", level=("str", True))
async def cmd_set_thinking_level(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
    return {"level": srv.agent.set_thinking_level(p["level"])}


@command("set_permission_mode", mode=("str", True))
async def cmd_set_permission_mode(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
    return {"mode": srv.agent.set_permission_mode(p["mode"])}


# --- approvals --------------------------------------------------------------------------


@command("set_client_capabilities", capabilities=("list", True))
async def cmd_set_client_capabilities(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
    known = {"approvals", "images", "hooks", "plans"}
    bad = [c for c in p["capabilities"] if c not in known]
    if bad:
        raise InvalidArguments(f"set_client_capabilities: unknown capabilities {bad}; known: {sorted(known)}")
    srv.broker.capabilities = set(p["capabilities"])
    return {"capabilities": sorted(srv.broker.capabilities)}


@command("permission_response", requestId=("str", True), decision=("str", True), feedback=("str", False))
async def cmd_permission_response(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
    from ama.permissions import Answer

    answer = Answer.parse(p["decision"], p.get("feedback", ""))
    return {"accepted": srv.broker.respond(p["requestId"], answer)}


# --- tools and discovery ----------------------------------------------------------------


@command("get_tools")
async def cmd_get_tools(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
    active = set(srv.agent.active_tool_names)
    return {
        "tools": [
            {"name": t.name, "description": t.description, "parameters": t.parameters,
             "permission": "read" if t.read_only else "write", "active": t.name in active}  # fmt: skip
            for t in srv.agent.tools
        ]
    }


@command("set_active_tools", names=("list", True))
async def cmd_set_active_tools(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
    return {"names": srv.agent.set_active_tools(p["names"])}


@command("get_commands")
async def cmd_get_commands(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
    return {"commands": srv.agent.prompts.commands()}


@command("get_skills")
async def cmd_get_skills(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
    return {"skills": [s.to_json() for s in srv.agent.prompts.skills]}


@command("get_todos")
async def cmd_get_todos(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
    data = srv.agent.session.latest_custom("ama.todo")
    return {"items": data.get("items", []) if isinstance(data, dict) else []}


@command("get_tasks")
async def cmd_get_tasks(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
    return {"tasks": srv.agent.get_tasks()}


@command("get_agents")
async def cmd_get_agents(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
    return {"agents": srv.agent.get_agents()}


# --- rewind -------------------------------------------------------------------------------


@command("get_rewind_points")
async def cmd_get_rewind_points(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
    return {"points": srv.agent.rewind_points()}


@command("rewind", entryId=("str", True), mode=("str", False), dryRun=("bool", False), onConflict=("str", False))
async def cmd_rewind(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
    return await srv.agent.rewind(
        p["entryId"], p.get("mode", "both"), dry_run=p.get("dryRun", False), on_conflict=p.get("onConflict", "skip")
    )


@command("summarize_from", entryId=("str", True), instructions=("str", False))
async def cmd_summarize_from(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
    return await srv.agent.summarize_from(p["entryId"], p.get("instructions"))


@command("summarize_up_to", entryId=("str", True), instructions=("str", False))
async def cmd_summarize_up_to(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
    return await srv.agent.summarize_up_to(p["entryId"], p.get("instructions"))


@command("compact", focus=("str", False))
async def cmd_compact(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
    """Summarize the older part of the conversation now (docs/compaction.md)."""
    return await srv.agent.compact(p.get("focus"))


# --- export and search ------------------------------------------------------------------

EXPORT_INLINE_LIMIT = 1024 * 1024


@command("export", format=("str", False), branch=("str", False))
async def cmd_export(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
    """Inline Markdown of the current session, redacted; never written to a host path
    chosen by the client (seeds/002)."""
    import hashlib

    from ama.export import export_session

    if p.get("format", "md") != "md":
        raise InvalidArguments("export: only format 'md' is available over RPC (inline Markdown)")
    path = srv.agent.session.path
    if path is None:
        raise AmaError("unsupported", "export: this session is in memory (no file to export)")
    body = export_session(path, "md", p.get("branch", "leaf"))
    if len(body) > EXPORT_INLINE_LIMIT:
        raise AmaError("too_large", f"export: {len(body)} bytes is over the 1 MiB inline limit; use ama sessions export")
    return {"markdown": body.decode("utf-8"), "bytes": len(body), "sha256": hashlib.sha256(body).hexdigest()}


@command("search", query=("str", True), all=("bool", False), role=("str", False), since=("str", False), limit=("int", False))
async def cmd_search(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
    """Full-text search of sessions, as ``ama sessions search --json``."""
    from ama.index.hits import parse_roles, search_page, since_ms
    from ama.index.pattern import Pattern
    from ama.index.search import SearchQuery

    limit = p.get("limit", 20)
    if limit < 1:
        raise InvalidArguments(f"search: limit must be at least 1, got {limit}")
    q = SearchQuery(
        Pattern(p["query"]),
        project=None if p.get("all") else srv.agent.cwd,
        roles=parse_roles(p.get("role")),
        since_ms=since_ms(p.get("since")),
        limit=limit,
    )
    loop = asyncio.get_running_loop()
    hits, more = await loop.run_in_executor(
        None, lambda: search_page(os.path.abspath(srv.sessions_dir), q, no_cache=False)
    )
    return {"hits": [h.to_json() for h in hits], "more": more}


# --- plans (docs/plan.md) -----------------------------------------------------------------


@command(
    "plan_response", planId=("str", True), decision=("str", True), mode=("str", False), feedback=("str", False),
    editedMarkdown=("str", False),
)  # fmt: skip
async def cmd_plan_response(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
    plans = srv.agent.plans
    data, task = await plans.answer(
        p["planId"], p["decision"], mode=p.get("mode"), feedback=p.get("feedback"),
        edited_markdown=p.get("editedMarkdown"), allow_fresh=True,
    )  # fmt: skip
    if data["decision"] == "approve_fresh":  # the plan is the first message of a new session
        plan = plans.get(data["planId"])
        assert plan is not None
        model = srv.agent.model.ref  # the model to execute with (plan.model has been left)
        await srv.switch("memory" if srv.args.no_session else "new", reason="new")
        task = srv.agent.plans.begin_fresh(plan, data["mode"], model=model)
        data["sessionId"] = srv.agent.session.id
    srv.track(task)
    return data


@command("get_plan", planId=("str", False))
async def cmd_get_plan(srv: RpcServer, p: dict[str, Any]) -> dict[str, Any]:
    """The latest record of a plan (default: the latest plan); ``data`` is null without one."""
    plan = srv.agent.plans.get(p.get("planId"))
    if plan is None and p.get("planId") is not None:
        raise AmaError("plan_not_found", f"get_plan: no plan {p['planId']!r} on this session's branch")
    srv.write({"type": "response", **({"id": srv.current_id} if srv.current_id is not None else {}),
               "command": "get_plan", "success": True, "data": plan.to_json() if plan else None})  # fmt: skip
    return RESPONDED
