"""PermissionSession: answers, "allow for session" memory, mode changes."""

from __future__ import annotations

import pytest

from ama.errors import InvalidArguments
from ama.permissions import (
    ALLOW_ONCE,
    ALLOW_SESSION,
    Answer,
    PermissionContext,
    PermissionSession,
    Rules,
    SandboxInfo,
)

CWD, HOME = "/ws", "/home/u"


def session(mode: str = "default", **kw) -> PermissionSession:
    return PermissionSession(
        PermissionContext(mode=mode, cwd=CWD, home=HOME, config_dir=HOME + "/.config/ama", **kw)
    )


def test_allow_for_session_remembers_the_command_prefix() -> None:
    s = session()
    d = s.decide("bash", {"command": "npm test -- --runInBand"})
    assert d.action == "ask"
    assert [str(r) for r in d.session_rules] == ["bash(npm test:*)"]
    final = s.resolve(d, ALLOW_SESSION)
    assert (final.action, final.source) == ("allow", "user")
    assert s.session_rules == ["bash(npm test:*)"]
    again = s.decide("bash", {"command": "npm test"})
    assert (again.action, again.source, again.rule) == ("allow", "session", "bash(npm test:*)")
    assert s.decide("bash", {"command": "npm run build"}).action == "ask"
    assert s.decide("bash", {"command": "npm test && rm -rf /"}).source == "dangerous"


@pytest.mark.parametrize(
    ("command", "rules"),
    [
        ("git status --short", ["bash(git status:*)"]),
        ("npm run build -- --prod", ["bash(npm run build:*)"]),
        ("python -m pytest -x tests", ["bash(python -m pytest:*)"]),
        ("pytest -q", ["bash(pytest:*)"]),
        ("ls -la | grep x", ["bash(ls:*)", "bash(grep:*)"]),
        ("make && make test", ["bash(make:*)", "bash(make test:*)"]),
        ("FOO=1 npm test", ["bash(FOO=1 npm test)"]),
        ("bash -c 'cargo build --release'", ["bash(cargo build:*)"]),
    ],
)
def test_suggested_session_rules(command: str, rules: list[str]) -> None:
    d = session().decide("bash", {"command": command})
    assert [str(r) for r in d.session_rules] == rules


def test_session_rules_for_secrets_and_dangers_are_exact() -> None:
    s = session()
    d = s.decide("bash", {"command": "cat ~/.aws/config"})
    assert d.source == "secret"
    s.resolve(d, ALLOW_SESSION)
    assert s.decide("bash", {"command": "cat ~/.aws/config"}).action == "allow"
    assert s.decide("bash", {"command": "cat ~/.aws/credentials"}).action == "ask"
    d = s.decide("bash", {"command": "git push --force origin feature"})
    s.resolve(d, ALLOW_SESSION)
    assert s.decide("bash", {"command": "git push --force origin feature"}).action == "allow"
    assert s.decide("bash", {"command": "git push --force origin main"}).action == "ask"
    d = s.decide("read", {"path": "~/.ssh/config"})
    s.resolve(d, ALLOW_SESSION)
    assert s.decide("read", {"path": "~/.ssh/config"}).action == "allow"
    assert s.decide("read", {"path": "~/.ssh/id_rsa"}).action == "ask"


def test_allow_edits_for_session_covers_the_workspace_only() -> None:
    s = session()
    d = s.decide("edit", {"path": "src/a.py"})
    assert [str(r) for r in d.session_rules] == ["edit(/ws/**)"]
    s.resolve(d, ALLOW_SESSION)
    assert s.decide("write", {"path": "docs/new.md"}).source == "session"
    assert s.decide("edit", {"path": "/etc/hosts"}).action == "ask"
    assert s.decide("edit", {"path": ".git/hooks/pre-push"}).source == "protected"


def test_allow_once_and_deny_do_not_remember() -> None:
    s = session()
    d = s.decide("bash", {"command": "make"})
    assert s.resolve(d, ALLOW_ONCE).action == "allow"
    denied = s.resolve(d, Answer("deny", "use the Makefile target 'build' instead"))
    assert (denied.action, denied.source) == ("deny", "user")
    assert (
        denied.reason
        == "The user denied this tool call. The user said: use the Makefile target 'build' instead"
    )
    assert s.session_rules == []
    assert s.decide("bash", {"command": "make"}).action == "ask"


def test_resolve_leaves_non_ask_decisions_alone() -> None:
    s = session()
    d = s.decide("read", {"path": "a"})
    assert s.resolve(d, Answer("deny")) is d


def test_resolve_keeps_the_sandbox_flag() -> None:
    s = session(sandbox=SandboxInfo(active=True, isolates_network=False), rules=Rules())
    d = s.decide("bash", {"command": "ls"})
    assert d.sandboxed and s.resolve(d, ALLOW_ONCE).sandboxed


def test_modes_change_and_are_checked() -> None:
    s = session("plan")
    assert s.decide("edit", {"path": "a"}).action == "deny"
    s.set_mode("auto-edit")
    assert s.mode == "auto-edit"
    assert s.decide("edit", {"path": "a"}).action == "allow"
    with pytest.raises(InvalidArguments):
        s.set_mode("yolo")


def test_answer_parse() -> None:
    assert Answer.parse("allow") == ALLOW_ONCE
    assert Answer.parse("allow_session") == ALLOW_SESSION
    assert Answer.parse("deny", "no") == Answer("deny", "no")
    with pytest.raises(InvalidArguments):
        Answer.parse("maybe")


def test_forget_session_rules() -> None:
    s = session()
    s.resolve(s.decide("bash", {"command": "ls"}), ALLOW_SESSION)
    assert s.decide("bash", {"command": "ls -la"}).action == "allow"
    s.forget_session_rules()
    assert s.decide("bash", {"command": "ls -la"}).action == "ask"


def test_public_surface() -> None:
    import ama.hooks
    import ama.permissions

    for module in (ama.permissions, ama.hooks):
        assert module.__all__ == sorted(module.__all__)
        # names load on first use (PEP 562): dir() lists them before they are loaded
        public = {n for n in dir(module) if not n.startswith("_")}
        assert set(module.__all__) == public
        for name in module.__all__:
            assert getattr(module, name) is not None
