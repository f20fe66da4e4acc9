"""ACP session config options: the model, the thinking level and the permission mode.

``config_options(agent)`` is the full list (wire shape, camelCase) that ``session/new``,
``session/load``, ``session/resume``, ``session/fork`` and ``session/set_config_option``
answer with, and that a ``config_option_update`` carries when one of them changes.
``set_option`` applies one ``session/set_config_option`` request.
"""

from __future__ import annotations

from typing import Any

from ama.agent.session import THINKING_LEVELS, AgentSession
from ama.errors import AmaError, InvalidArguments
from ama.rpc.acp_map import MODES

MODEL, THINKING, MODE = "model", "thinking", "mode"
#: agent events after which the client gets a ``config_option_update``
CHANGE_EVENTS = ("model_changed", "thinking_level_changed", "permission_mode_changed")
THINKING_NAMES = {"off": "Off", "minimal": "Minimal", "low": "Low", "medium": "Medium", "high": "High",
                  "xhigh": "Extra high"}  # fmt: skip


def _model_options(agent: AgentSession) -> list[dict[str, Any]]:
    current = agent.model.ref
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for m in agent.registry.list():
        if m.ref in seen:
            continue
        seen.add(m.ref)
        out.append({"value": m.ref, "name": m.id, "description": m.ref})
    if current not in seen:  # a scripted model, or one given by path: still selectable
        out.insert(0, {"value": current, "name": agent.model.id, "description": current})
    return out


def config_options(agent: AgentSession) -> list[dict[str, Any]]:
    return [
        {"id": MODEL, "name": "Model", "category": "model", "type": "select",
         "currentValue": agent.model.ref, "options": _model_options(agent)},
        {"id": THINKING, "name": "Thinking level", "category": "thought_level", "type": "select",
         "currentValue": agent.thinking_level,
         "options": [{"value": lv, "name": THINKING_NAMES.get(lv, lv)} for lv in THINKING_LEVELS]},
        {"id": MODE, "name": "Permission mode", "category": "mode", "type": "select",
         "currentValue": agent.permissions.mode,
         "options": [{"value": m["id"], "name": m["name"], "description": m["description"]} for m in MODES]},
    ]  # fmt: skip


def set_option(agent: AgentSession, config_id: str, value: Any) -> None:
    """Apply one option; a bad id or value is ``InvalidArguments`` naming it."""
    if config_id not in (MODEL, THINKING, MODE):
        raise InvalidArguments(f"unknown config option {config_id!r}; ama has {MODEL}, {THINKING} and {MODE}")
    if not isinstance(value, str):
        raise InvalidArguments(f"config option {config_id!r} takes a string value, got {value!r}")
    try:
        if config_id == MODEL:
            agent.set_model(value)
        elif config_id == THINKING:
            agent.set_thinking_level(value)
        else:
            agent.set_permission_mode(value)
    except InvalidArguments:
        raise
    except AmaError as err:  # e.g. an unknown model: the value is what is wrong
        raise InvalidArguments(f"{config_id} {value!r}: {err.message}") from None
