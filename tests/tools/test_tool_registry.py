"""The tool set, its specs, the shared argument validation."""

from __future__ import annotations

import json

import pytest

from ama.tools import Tool, ToolError, builtin_tools, tool_specs
from ama.tools._schema import validate_args

NAMES = ["read", "write", "edit", "bash", "bash_output", "bash_kill", "ls", "find", "grep", "todo"]


def by_name(**kw) -> dict[str, Tool]:
    return {t.name: t for t in builtin_tools(**kw)}


def test_builtin_tools_order_and_protocol():
    tools = builtin_tools()
    assert [t.name for t in tools] == NAMES
    for t in tools:
        assert isinstance(t, Tool)
        assert t.label and t.description
        assert t.parameters["type"] == "object"
        assert t.parameters["additionalProperties"] is False


def test_read_only_flags():
    ro = {t.name for t in builtin_tools() if t.read_only}
    assert ro == {"read", "ls", "find", "grep", "todo", "bash_output"}


def test_specs_are_byte_stable():
    a = json.dumps(tool_specs(builtin_tools()))
    specs = tool_specs(builtin_tools())
    specs[0]["parameters"]["properties"].clear()  # callers may mutate their copy
    b = json.dumps(tool_specs(builtin_tools()))
    assert a == b
    assert [s["name"] for s in json.loads(a)] == NAMES
    assert set(json.loads(a)[0]) == {"name", "description", "parameters"}


def test_bash_sandbox_parameter_only_when_active():
    plain = by_name()["bash"]
    sandboxed = by_name(sandbox_active=True, sandbox_description="Runs in a box.")["bash"]
    assert "sandbox" not in plain.parameters["properties"]
    assert sandboxed.parameters["properties"]["sandbox"]["type"] == "boolean"
    assert sandboxed.description == plain.description + "\nRuns in a box."
    default = by_name(sandbox_active=True)["bash"]
    assert default.description.endswith("sandbox:false needs approval.")
    # everything but bash is byte-identical with and without the sandbox
    a = tool_specs(builtin_tools())
    b = tool_specs(builtin_tools(sandbox_active=True))
    assert [s for s in a if s["name"] != "bash"] == [s for s in b if s["name"] != "bash"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "'path' is required"),
        ({"path": 3}, "'path' must be a string, got an integer"),
        ({"path": ""}, "'path' must not be empty"),
        ({"path": "a", "limit": 0}, "'limit' must be at least 1, got 0"),
        ({"path": "a", "limit": "10"}, "'limit' must be an integer, got a string"),
        ({"path": "a", "limit": True}, "'limit' must be an integer, got a boolean"),
        ({"path": "a", "lines": 3}, "unexpected argument 'lines' (allowed: path, offset, limit)"),
    ],
)
def test_read_validation_messages(args, message):
    err = by_name()["read"].validate(args)
    assert err == f"Invalid arguments for read: {message}"


def test_validation_enums_arrays_and_nulls():
    tools = by_name()
    assert "must be one of 'content', 'files_with_matches', 'count', got 'lines'" in tools["grep"].validate(
        {"pattern": "x", "output_mode": "lines"}
    )
    assert "'ignore[1]' must be a string" in tools["ls"].validate({"ignore": ["a", 1]})
    assert "'items[0].status' must be one of" in tools["todo"].validate(
        {"action": "set", "items": [{"id": "1", "text": "t", "status": "started"}]}
    )
    assert "'bash' must be" not in (tools["bash"].validate({"command": "ls", "timeout": 601}) or "")
    assert "'timeout' must be at most 600" in tools["bash"].validate({"command": "ls", "timeout": 601})
    # an optional argument sent as null counts as absent; an integral float is an integer
    assert tools["read"].validate({"path": "a", "offset": None, "limit": 5.0}) is None
    assert validate_args({"type": "object"}, []) == "the arguments must be an object, got an array"


@pytest.mark.anyio
async def test_execute_validates_too(ctx):
    with pytest.raises(ToolError, match="'command' is required"):
        await by_name()["bash"].execute("c", {}, ctx)
