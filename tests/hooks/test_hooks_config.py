"""Validation of the ``hooks`` config value: shapes accepted, errors that name the bad entry."""

from __future__ import annotations

import pytest

from ama.errors import InvalidArguments
from ama.hooks import HookSpec, HookTable, parse_hooks


def test_flat_and_nested_shapes() -> None:
    table = parse_hooks(
        {
            "PreToolUse": [
                {"matcher": "bash|edit", "command": "./check.sh", "timeout": 30},
                {
                    "matcher": "Write",
                    "hooks": [{"type": "command", "command": "fmt.sh"}, {"command": "lint.sh"}],
                },
            ],
            "Stop": [{"command": "make lint"}],
        }
    )
    assert table.hooks == (
        HookSpec("PreToolUse", "./check.sh", "bash|edit", 30.0, "hooks.PreToolUse[0]"),
        HookSpec("PreToolUse", "fmt.sh", "Write", None, "hooks.PreToolUse[1].hooks[0]"),
        HookSpec("PreToolUse", "lint.sh", "Write", None, "hooks.PreToolUse[1].hooks[1]"),
        HookSpec("Stop", "make lint", None, None, "hooks.Stop[0]"),
    )


def test_matching_and_order() -> None:
    table = parse_hooks(
        {
            "PreToolUse": [
                {"matcher": "bash|edit", "command": "a"},
                {"matcher": "*", "command": "b"},
                {"command": "a"},  # same command again: run once
                {"matcher": "read", "command": "c"},
            ],
            "UserPromptSubmit": [{"matcher": "ignored", "command": "d"}],
        }
    )
    assert [h.command for h in table.for_event("PreToolUse", "bash")] == ["a", "b"]
    assert [h.command for h in table.for_event("PreToolUse", "Edit")] == ["a", "b"]  # case-insensitive
    assert [h.command for h in table.for_event("PreToolUse", "bashful")] == ["b", "a"]  # full match only
    assert [h.command for h in table.for_event("PreToolUse", "read")] == ["b", "a", "c"]
    assert [h.command for h in table.for_event("UserPromptSubmit")] == ["d"]
    assert table.for_event("Stop") == []


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([], "hooks: must be an object keyed by event"),
        ({"PreTooluse": []}, "hooks.PreTooluse: unknown event (known: PreToolUse, PostToolUse"),
        ({"Stop": {"command": "x"}}, "hooks.Stop: must be a list of hooks"),
        ({"Stop": ["make"]}, "hooks.Stop[0]: must be an object"),
        ({"Stop": [{}]}, "hooks.Stop[0].command: must be a non-empty string, got None"),
        ({"Stop": [{"command": "  "}]}, "hooks.Stop[0].command: must be a non-empty string"),
        ({"Stop": [{"command": "x", "timeout": 0}]}, "hooks.Stop[0].timeout: must be a positive number"),
        ({"Stop": [{"command": "x", "timeout": "5"}]}, "hooks.Stop[0].timeout: must be a positive number"),
        ({"Stop": [{"command": "x", "timeout": True}]}, "hooks.Stop[0].timeout: must be a positive number"),
        ({"Stop": [{"comand": "x"}]}, "hooks.Stop[0]: unknown key 'comand'"),
        (
            {"PreToolUse": [{"matcher": "(", "command": "x"}]},
            "hooks.PreToolUse[0].matcher: invalid regular expr",
        ),
        ({"PreToolUse": [{"matcher": 3, "command": "x"}]}, "hooks.PreToolUse[0].matcher: must be a string"),
        ({"Stop": [{"type": "prompt", "command": "x"}]}, "hooks.Stop[0].type: only 'command' hooks"),
        ({"Stop": [{"hooks": []}]}, "hooks.Stop[0].hooks: must be a non-empty list"),
        (
            {"Stop": [{"hooks": [{"command": "x", "extra": 1}]}]},
            "hooks.Stop[0].hooks[0]: unknown key 'extra'",
        ),
    ],
)
def test_errors_name_the_entry(value, message: str) -> None:
    with pytest.raises(InvalidArguments) as err:
        parse_hooks(value)
    assert err.value.message.startswith(message), err.value.message


def test_lenient_mode_keeps_the_good_entries() -> None:
    errors: list[str] = []
    table = parse_hooks({"Nope": [], "Stop": [{"command": "ok"}, {"command": 1}]}, errors=errors)
    assert [h.command for h in table.hooks] == ["ok"]
    assert errors == [
        "hooks.Nope: unknown event (known: PreToolUse, PostToolUse, UserPromptSubmit, Stop, PostRewind)",
        "hooks.Stop[1].command: must be a non-empty string, got 1",
    ]


def test_empty_values() -> None:
    assert not parse_hooks(None)
    assert not parse_hooks({})
    table = HookTable()
    assert parse_hooks(table) is table
