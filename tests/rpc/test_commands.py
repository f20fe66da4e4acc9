"""Every RPC command: documented in docs/rpc.md, answers valid arguments, refuses invalid ones."""

from __future__ import annotations

import re
from pathlib import Path

from ama.rpc.commands import HANDLERS, SPECS, UNSUPPORTED
from tests.agent.helpers import write_script
from tests.conftest import ROOT
from tests.rpc.helpers import Rpc

DOC = (ROOT / "docs" / "rpc.md").read_text()


def test_docs_list_every_command_and_the_count() -> None:
    documented = re.findall(r"^\| `([a-z_]+)` \|", DOC, re.M)
    assert sorted(documented) == sorted(HANDLERS)
    assert f"In all, {len(HANDLERS)} commands." in DOC


# command -> (valid params, invalid params, expected error code for the invalid call)
CASES: dict[str, tuple[dict, dict | None, str | None]] = {
    "get_state": ({}, None, None),
    "get_messages": ({}, None, None),
    "get_entries": ({}, {"since": 5}, "invalid_arguments"),
    "get_tree": ({}, None, None),
    "get_last_assistant_text": ({}, None, None),
    "get_session_stats": ({}, None, None),
    "get_available_models": ({}, None, None),
    "get_tools": ({}, None, None),
    "get_commands": ({}, None, None),
    "get_skills": ({}, None, None),
    "get_todos": ({}, None, None),
    "get_tasks": ({}, None, None),
    "get_agents": ({}, None, None),
    "get_fork_messages": ({}, None, None),
    "get_rewind_points": ({}, None, None),
    "set_thinking_level": ({"level": "low"}, {"level": "loud"}, "invalid_arguments"),
    "set_permission_mode": ({"mode": "auto-edit"}, {"mode": "yolo"}, "invalid_arguments"),
    "set_session_name": ({"name": "conformance"}, {"name": 3}, "invalid_arguments"),
    "set_client_capabilities": ({"capabilities": ["approvals"]}, {"capabilities": ["telepathy"]}, "invalid_arguments"),
    "permission_response": ({"requestId": "zz", "decision": "allow"}, {"requestId": "zz", "decision": "maybe"}, "invalid_arguments"),
    "set_active_tools": ({"names": ["read", "ls"]}, {"names": ["nope"]}, "invalid_arguments"),
    "set_model": ({"model": "MODEL"}, {"model": "nope/nothing"}, None),
    "set_label": ({"entryId": "FIRST", "label": "start"}, {"entryId": "missing0"}, "not_found"),
    "navigate": ({"entryId": "LEAF"}, {"entryId": "missing0"}, "not_found"),
    "search": ({"query": "hello"}, {"query": "/(/"}, "invalid_arguments"),
    "export": ({}, {"format": "pdf"}, "invalid_arguments"),
    "rewind": ({"entryId": "POINT", "mode": "conversation", "dryRun": True}, {"entryId": "POINT", "mode": "sideways"}, "invalid_arguments"),
    "summarize_up_to": ({"entryId": "POINT"}, {}, "invalid_arguments"),
    "summarize_from": ({"entryId": "POINT"}, {"entryId": "FIRST"}, "invalid_arguments"),
    "plan_response": ({"planId": "p", "decision": "approve"}, {"planId": "p", "decision": "maybe"}, "invalid_arguments"),
    "get_plan": ({}, {"planId": 1}, "invalid_arguments"),
    "prompt": ({"message": "again"}, {"message": 42}, "invalid_arguments"),
    "compact": ({"focus": "the greeting"}, {"focus": 3}, "invalid_arguments"),
    "steer": ({"message": "steer when idle"}, {}, "invalid_arguments"),
    "follow_up": ({"message": "follow when idle"}, {}, "invalid_arguments"),
    "abort": ({}, None, None),
    "fork": ({"entryId": "POINT"}, {"entryId": "missing0"}, "invalid_arguments"),
    "switch_session": ({"sessionId": "SESSION"}, {"sessionId": "ffffffff"}, "not_found"),
    "new_session": ({}, None, None),
}


def test_every_command_valid_and_invalid(tmp_path: Path) -> None:
    assert sorted(CASES) == sorted(HANDLERS)
    model = write_script(tmp_path / "s.json", ["hello there"] + ["summary text"] * 20 + ["more"] * 20, mode="sequence")
    ws = tmp_path / "ws"
    ws.mkdir()
    rpc = Rpc(ws, "--model", model)
    try:
        rpc.event("session_start")
        rpc.call("prompt", message="hello")
        rpc.event("agent_settled")
        state = rpc.call("get_state")["data"]
        entries = rpc.call("get_entries")["data"]["entries"]
        point = rpc.call("get_rewind_points")["data"]["points"][0]["entryId"]
        subst = {"MODEL": model, "FIRST": entries[0]["id"], "LEAF": state["leafId"], "POINT": point,
                 "SESSION": state["sessionId"]}  # fmt: skip

        def fill(params: dict) -> dict:
            return {k: subst.get(v, v) if isinstance(v, str) else v for k, v in params.items()}

        for name, (valid, invalid, code) in CASES.items():
            if invalid is not None:
                r = rpc.call(name, **fill(invalid))
                assert r["success"] is False, (name, r)
                if code:
                    assert r["error"]["code"] == code, (name, r)
                assert r["error"]["message"]
            r = rpc.call(name, **fill(valid))
            if name in UNSUPPORTED:
                assert r["error"]["code"] == "unsupported", (name, r)
            elif name == "plan_response":  # well-formed, but this session has no pending plan
                assert r["error"]["code"] == "plan_not_found", (name, r)
            else:
                assert r["success"] is True, (name, r)
            if name in ("prompt", "steer", "follow_up"):
                rpc.event("agent_settled")
                subst["POINT"] = rpc.call("get_rewind_points")["data"]["points"][-1]["entryId"]
        assert SPECS.keys() == HANDLERS.keys()
    finally:
        assert rpc.close() == 0
