"""Read-only views of an agent's session, shared by the RPC commands and the SDK."""

from __future__ import annotations

from typing import Any

from ama.agent.events import plain
from ama.errors import NotFound
from ama.messages import AssistantMessage, TextContent, UserMessage, text_of
from ama.session.external_usage import session_external
from ama.session.history import count


def entries_since(session: Any, since: str | None = None) -> dict[str, Any]:
    """Entries after ``since`` (an entry id) in file order (all when None), and the leaf."""
    tree = session.tree
    start = 0
    if since:
        if since not in tree.position:
            raise NotFound(f"no entry {since} in session {session.id}")
        start = tree.position[since] + 1
    return {"entries": [plain(e) for e in tree.entries[start:]], "leafId": tree.leaf_id}


def tree_nodes(session: Any) -> dict[str, Any]:
    tree = session.tree
    labels = tree.labels()
    nodes = []
    for e in tree.entries:
        node: dict[str, Any] = {"id": e.id, "parentId": tree.parent[e.id], "type": e.type, "timestamp": e.timestamp}
        if e.type == "message":
            m = e.message
            node["role"] = type(m).__struct_config__.tag
            if isinstance(m, AssistantMessage):
                node["preview"] = " ".join(b.text for b in m.content if isinstance(b, TextContent))[:120]
            else:
                node["preview"] = text_of(getattr(m, "content", ""))[:120]
        elif getattr(e, "custom_type", None):
            node["customType"] = e.custom_type
        if e.id in labels:
            node["label"] = labels[e.id]
        nodes.append(node)
    return {"nodes": nodes, "leafId": tree.leaf_id}


def session_stats(session: Any) -> dict[str, Any]:
    """RPC ``get_session_stats`` / SDK ``stats()``: counts, and tokens and cost over every
    request of the file, each kind of request (``conversation``, ``compaction``,
    ``branch_summary``, ``cache_warm``, ``permission_classify``…) also apart in ``byKind``
    (agent/usage_stats.py: the definitions of ``ama stats``)."""
    from ama.agent.usage_stats import totals, usage_by_kind

    c = count(session.entries)
    calls = 0
    for e in session.entries:
        if e.type == "message" and isinstance(e.message, AssistantMessage):
            calls += sum(1 for b in e.message.content if type(b).__name__ == "ToolCall")
    by_kind = usage_by_kind(session.entries)
    t = totals(by_kind)
    stats: dict[str, Any] = {
        "sessionId": session.id,
        "sessionFile": session.path,
        "userMessages": c.user,
        "assistantMessages": c.assistant,
        "toolCalls": calls,
        "toolResults": c.tool_results,
        "totalMessages": c.messages,
        "tokens": t["tokens"],
        "cost": round(t["cost"] or 0.0, 6),
        "requests": t["requests"],
        "requestsByKind": {k: r["requests"] for k, r in by_kind.items()},
        "byKind": by_kind,
    }
    external = session_external(session.entries)
    if external["agents"] or external["invalid"]:
        stats["external"] = external  # only in sessions that ran external agents
    return stats


def user_entries_on_branch(session: Any) -> list[Any]:
    return [e for e in session.branch() if e.type == "message" and isinstance(e.message, UserMessage)]


def last_assistant_text(session: Any) -> str | None:
    for e in reversed(session.branch()):
        if e.type == "message" and isinstance(e.message, AssistantMessage):
            return "".join(b.text for b in e.message.content if isinstance(b, TextContent))
    return None
