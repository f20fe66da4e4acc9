"""The agent's state as every interface reports it (RPC ``get_state``, ACP, the SDK).

Plain functions over the session and the model, so that ``ama --mode rpc`` can answer
``get_state`` from the first step of a build (``agent/compose.py:AgentDraft``) with the very
words ``AgentSession.state()`` uses once the agent exists.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def model_json(model: Any) -> dict[str, Any]:
    out = {"provider": model.provider, "id": model.id}
    if model.channel:
        out["channel"] = model.channel
    return out


def agent_state(
    session: Any,
    model: Any,
    thinking_level: str,
    permission_mode: str,
    *,
    busy: bool = False,
    steering: Sequence[str] = (),
    follow_up: Sequence[str] = (),
) -> dict[str, Any]:
    return {
        "sessionId": session.id,
        "sessionFile": session.path,
        "cwd": session.cwd,
        "model": model_json(model),
        "thinkingLevel": thinking_level,
        "permissionMode": permission_mode,
        "busy": busy,
        "leafId": session.leaf_id,
        "queue": {"steering": list(steering), "followUp": list(follow_up)},
        "name": session.name,
    }
