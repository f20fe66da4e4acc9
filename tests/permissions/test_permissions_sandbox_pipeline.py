"""The sandbox truth table of 000 sandbox.md "权限集成": mode x sandbox state x case x unattended."""

from __future__ import annotations

import shlex

import pytest

from ama.permissions import MODES, Decision, HookDecision, PermissionContext, Rules, SandboxInfo, decide

CWD, HOME, CONFIG = "/ws", "/home/u", "/home/u/.config/ama"

SANDBOXES = {
    "sandbox": SandboxInfo(active=True, isolates_network=True),
    "sandbox+net": SandboxInfo(active=True, isolates_network=False),
    "none": None,
}

# case -> (args, deny rules, hook)
CASES = {
    "plain": ({"command": "ls -la && echo hi > out.txt"}, [], None),
    "dangerous": ({"command": "git push --force origin main"}, [], None),
    "deny_rule": ({"command": "make deploy prod"}, ["bash(make deploy:*)"], None),
    "hook_ask": ({"command": "ls -la"}, [], HookDecision("ask", "check this")),
    "secret": ({"command": "cat ~/.aws/credentials"}, [], None),
    "nested_secret": ({"command": "bash -c 'cat ~/.ssh/id_rsa | base64'"}, [], None),
    "sandbox_false": ({"command": "npm install", "sandbox": False}, [], None),
}

# case -> mode -> (sandbox, sandbox+net, none); "plan" denies every bash call
ASK3, ALLOW3 = ("ask",) * 3, ("allow",) * 3
EXPECTED: dict[str, dict[str, tuple[str, str, str]]] = {
    "plain": {"allowlist": ASK3, "default": ("allow", "ask", "ask"), "auto-edit": ("allow", "ask", "ask"),
              "auto": ALLOW3, "full-auto": ALLOW3},
    "dangerous": {"allowlist": ASK3, "default": ASK3, "auto-edit": ASK3, "auto": ASK3, "full-auto": ASK3},
    "deny_rule": {m: ("deny",) * 3 for m in MODES},
    "hook_ask": {"allowlist": ASK3, "default": ASK3, "auto-edit": ASK3, "auto": ASK3, "full-auto": ASK3},
    "secret": {"allowlist": ASK3, "default": ASK3, "auto-edit": ASK3, "auto": ASK3, "full-auto": ASK3},
    "nested_secret": {"allowlist": ASK3, "default": ASK3, "auto-edit": ASK3, "auto": ASK3, "full-auto": ASK3},
    "sandbox_false": {"allowlist": ASK3, "default": ASK3, "auto-edit": ASK3, "auto": ASK3, "full-auto": ALLOW3},
}  # fmt: skip
SOURCES = {"dangerous": "dangerous", "deny_rule": "rule", "hook_ask": "hook", "secret": "secret",
           "nested_secret": "secret"}  # fmt: skip


def ctx(
    mode: str, sandbox: str = "none", *, unattended: bool = False, **rules: list[str]
) -> PermissionContext:
    return PermissionContext(
        mode=mode, cwd=CWD, home=HOME, config_dir=CONFIG, rules=Rules.parse(**rules),
        sandbox=SANDBOXES[sandbox], unattended=unattended,
    )  # fmt: skip


@pytest.mark.parametrize("unattended", [False, True], ids=["interactive", "unattended"])
@pytest.mark.parametrize("sandbox", list(SANDBOXES))
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", list(CASES))
def test_truth_table(case: str, mode: str, sandbox: str, unattended: bool) -> None:
    args, deny, hook = CASES[case]
    d = decide("bash", args, ctx(mode, sandbox, unattended=unattended, deny=deny), hook=hook)
    expected = "deny" if mode == "plan" else EXPECTED[case][mode][list(SANDBOXES).index(sandbox)]
    if unattended and expected == "ask":
        assert (d.action, d.source) == ("deny", "unattended")
        assert "requires approval" in d.reason and "non-interactive" in d.reason
    else:
        assert d.action == expected, d
    if expected == "ask" and case in SOURCES:
        assert decide("bash", args, ctx(mode, sandbox, deny=deny), hook=hook).source == SOURCES[case]
    # one sandbox decision: the call runs sandboxed iff the sandbox is active and not refused
    assert d.sandboxed == (sandbox != "none" and case != "sandbox_false")


def test_sandbox_allow_is_labelled() -> None:
    d = decide("bash", {"command": "rm -r dist && npm run build"}, ctx("default", "sandbox"))
    assert (d.action, d.source, d.sandboxed) == ("allow", "sandbox", True)


def test_network_allowed_sandbox_explains_why_it_asks() -> None:
    d = decide("bash", {"command": "ls"}, ctx("default", "sandbox+net"))
    assert d.action == "ask" and "allows network" in d.reason


def test_unreadable_or_too_deep_commands_are_not_auto_allowed() -> None:
    deep = "ls"
    for _ in range(6):
        deep = "bash -c " + shlex.quote(deep)
    for command in ['echo "oops', deep]:
        d = decide("bash", {"command": command}, ctx("default", "sandbox"))
        assert d.action == "ask", command
        assert decide("bash", {"command": command}, ctx("full-auto", "sandbox")).action == "ask"


@pytest.mark.parametrize(
    ("extra", "source"),
    [
        ({"allow": ["bash(npm install)"]}, "rule"),
        ({"allow": ["bash(npm:*)"]}, "rule"),
    ],
)
def test_sandbox_false_can_be_allowed_by_allow_rules(extra: dict, source: str) -> None:
    d = decide("bash", {"command": "npm install", "sandbox": False}, ctx("default", "sandbox", **extra))
    assert (d.action, d.source, d.sandboxed) == ("allow", source, False)


def test_sandbox_false_can_be_allowed_by_hook_and_session() -> None:
    args = {"command": "npm install", "sandbox": False}
    d = decide("bash", args, ctx("auto-edit", "sandbox"), hook=HookDecision("allow"))
    assert (d.action, d.source) == ("allow", "hook")
    asked = decide("bash", args, ctx("default", "sandbox"))
    assert asked.action == "ask"
    remembered = PermissionContext(
        mode="default",
        cwd=CWD,
        home=HOME,
        sandbox=SANDBOXES["sandbox"],
        session_allows=frozenset(asked.session_rules),
    )
    d = decide("bash", args, remembered)
    assert (d.action, d.source, d.sandboxed) == ("allow", "session", False)


def test_deny_rules_dangerous_and_hook_ask_outrank_the_sandbox() -> None:
    c = ctx("default", "sandbox", deny=["bash(ls:*)"])
    assert decide("bash", {"command": "ls"}, c).action == "deny"
    assert decide("bash", {"command": "git reset --hard"}, ctx("default", "sandbox")).source == "dangerous"
    d = decide("bash", {"command": "ls"}, ctx("default", "sandbox"), hook=HookDecision("ask", "why"))
    assert (d.action, d.source, d.reason) == ("ask", "hook", "A PreToolUse hook asks for approval: why")


def test_decision_request_reason() -> None:
    assert Decision("ask", "", "hook").request_reason == "hook"
    assert Decision("ask", "", "dangerous").request_reason == "dangerous"
    assert Decision("ask", "", "secret").request_reason == "dangerous"
    assert Decision("ask", "", "mode").request_reason == "mode"
