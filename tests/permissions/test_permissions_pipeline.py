"""Modes, rules, secret paths, protected paths and hooks in the decision pipeline."""

from __future__ import annotations

import pytest

from ama.errors import InvalidArguments
from ama.hooks import HookOutcome
from ama.permissions import MODES, HookDecision, PermissionContext, Rules, decide

CWD, HOME, CONFIG, DATA = "/ws", "/home/u", "/home/u/.config/ama", "/home/u/.local/share/ama"


def ctx(mode: str = "default", *, unattended: bool = False, **rules: list[str]) -> PermissionContext:
    return PermissionContext(
        mode=mode, cwd=CWD, home=HOME, config_dir=CONFIG, data_dir=DATA, rules=Rules.parse(**rules),
        unattended=unattended,
    )  # fmt: skip


def action(tool: str, args: dict, c: PermissionContext, **kw) -> str:
    return decide(tool, args, c, **kw).action


# tool call -> expected action per mode (plan, allowlist, default, auto-edit, auto, full-auto)
MODE_TABLE = [
    ("read", {"path": "src/a.py"}, "allow ask allow allow allow allow"),
    ("grep", {"pattern": "x"}, "allow ask allow allow allow allow"),
    ("ls", {}, "allow ask allow allow allow allow"),
    ("find", {"path": "/etc"}, "allow ask allow allow allow allow"),
    ("edit", {"path": "src/a.py"}, "deny ask ask allow allow allow"),
    ("write", {"path": "/ws/new/file.txt"}, "deny ask ask allow allow allow"),
    ("write", {"path": "../other/x"}, "deny ask ask ask ask allow"),
    ("edit", {"path": "/etc/hosts"}, "deny ask ask ask ask allow"),
    ("edit", {"path": ".ama/config.json"}, "deny ask ask ask ask allow"),
    ("write", {"path": ".git/hooks/pre-commit"}, "deny ask ask ask ask allow"),
    ("edit", {"path": ".git/config"}, "deny ask ask ask ask allow"),
    ("edit", {"path": ".git/info/exclude"}, "deny ask ask allow allow allow"),
    ("edit", {}, "deny ask ask ask ask allow"),
    ("bash", {"command": "ls"}, "deny ask ask ask allow allow"),
    ("todo", {"action": "get"}, "allow allow allow allow allow allow"),
    ("todo", {"action": "set", "items": []}, "deny allow allow allow allow allow"),
]


@pytest.mark.parametrize(("tool", "args", "row"), MODE_TABLE)
def test_modes(tool: str, args: dict, row: str) -> None:
    for mode, expected in zip(MODES, row.split()):
        assert action(tool, args, ctx(mode)) == expected, (mode, tool, args)


def test_unknown_tools_use_the_read_only_flag() -> None:
    assert action("webfetch", {}, ctx("default"), read_only=True) == "allow"
    assert action("webfetch", {}, ctx("plan"), read_only=True) == "allow"
    assert action("deploy", {}, ctx("default"), read_only=False) == "ask"
    assert action("deploy", {}, ctx("plan")) == "deny"
    assert action("deploy", {}, ctx("full-auto")) == "allow"
    assert action("deploy", {}, ctx("allowlist", allow=["deploy"])) == "allow"


def test_plan_mode_tells_the_model_why() -> None:
    d = decide("edit", {"path": "a.py"}, ctx("plan"))
    assert (d.action, d.source) == ("deny", "mode")
    assert "plan mode" in d.reason and "read-only" in d.reason


def test_allowlist_runs_only_what_rules_allow() -> None:
    c = ctx("allowlist", allow=["read", "bash(npm test:*)", "edit(src/**)"])
    assert action("read", {"path": "x"}, c) == "allow"
    assert action("grep", {"pattern": "x"}, c) == "allow"  # read(…) covers the read family
    assert action("bash", {"command": "npm test -- -x"}, c) == "allow"
    assert action("bash", {"command": "npm run lint"}, c) == "ask"
    assert action("write", {"path": "src/a.py"}, c) == "allow"
    assert action("edit", {"path": "docs/a.md"}, c) == "ask"


def test_rule_precedence_deny_over_ask_over_allow() -> None:
    c = ctx("full-auto", allow=["bash"], ask=["bash(npm publish:*)"], deny=["bash(rm:*)"])
    assert decide("bash", {"command": "rm x"}, c).action == "deny"
    assert decide("bash", {"command": "npm publish --tag next"}, c).source == "rule"
    assert decide("bash", {"command": "npm publish"}, c).action == "ask"
    assert decide("bash", {"command": "ls"}, c).action == "allow"
    c = ctx("default", allow=["read(.env)"], deny=["read(.env)"])
    assert action("read", {"path": ".env"}, c) == "deny"


def test_deny_rules_see_through_wrappers_and_nesting() -> None:
    c = ctx("full-auto", deny=["bash(rm:*)"])
    for command in [
        "FOO=1 /bin/rm x",
        "timeout 5 rm x",
        "bash -c 'rm x'",
        "echo $(rm x)",
        "ls; rm x",
        "ls | xargs rm",
    ]:
        assert action("bash", {"command": command}, c) == "deny", command
    for command in ["echo rm x", "npm run rm", "git rm --cached x"]:
        assert action("bash", {"command": command}, c) == "allow", command


def test_allow_rules_must_cover_every_command() -> None:
    c = ctx("default", allow=["bash(npm test)", "bash(npm run *)", "bash(git status:*)"])
    assert decide("bash", {"command": "npm test"}, c).rule == "bash(npm test)"
    assert action("bash", {"command": "git status && npm test"}, c) == "allow"
    assert action("bash", {"command": "npm test && rm -rf build"}, c) == "ask"
    assert action("bash", {"command": "npm run build; curl evil.example"}, c) == "ask"
    assert action("bash", {"command": "npm test $(curl evil.example)"}, c) == "ask"
    assert action("bash", {"command": "bash -c 'npm test'"}, c) == "allow"  # sh -c is looked through
    assert action("bash", {"command": "sudo npm test"}, c) == "ask"
    assert action("bash", {"command": 'echo "unterminated'}, c) == "ask"


def test_dangerous_commands_ask_even_with_broad_allow_rules() -> None:
    for allow in (["bash"], ["bash(git:*)"], ["bash(*)"]):
        d = decide("bash", {"command": "git push --force"}, ctx("full-auto", allow=allow))
        assert (d.action, d.source) == ("ask", "dangerous"), allow


def test_allow_rules_that_name_a_dangerous_command_allow_it() -> None:
    c = ctx("default", allow=["bash(git push --force-with-lease:*)", "bash(git reset --hard)"])
    assert action("bash", {"command": "git push --force-with-lease origin feature"}, c) == "allow"
    assert action("bash", {"command": "git reset --hard"}, c) == "allow"
    assert action("bash", {"command": "git reset --hard && git push -f"}, c) == "ask"


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("read", {"path": "~/.ssh/id_rsa"}),
        ("read", {"path": "~u/.ssh/id_rsa"}),
        ("read", {"path": "~root/.ssh/id_rsa"}),
        ("read", {"path": "/var/home/u/.aws/credentials"}),
        ("ls", {"path": "~/.ssh"}),
        ("grep", {"pattern": "key", "path": "/home/u/.aws"}),
        ("find", {"path": "~/.kube/"}),
        ("read", {"path": "/home/u/.docker/config.json"}),
        ("read", {"path": "~/.config/gcloud/credentials.db"}),
        ("read", {"path": "~/.netrc"}),
        ("read", {"path": "~/.pgpass"}),
        ("read", {"path": "~/.git-credentials"}),
        ("read", {"path": "~/.gnupg/private-keys-v1.d/x.key"}),
        ("read", {"path": "/home/u/.config/ama/auth.json"}),
        ("read", {"path": "/home/u/.local/share/ama/auth.json"}),
        ("read", {"path": ".env"}),
        ("read", {"path": "app/.env.production"}),
        ("grep", {"pattern": "KEY", "path": ".env.local"}),
        ("write", {"path": "~/.ssh/authorized_keys"}),
        ("bash", {"command": "cat ~/.ssh/id_rsa"}),
        ("bash", {"command": "cat $HOME/.aws/credentials"}),
        ("bash", {"command": "cat ~/.s''sh/id_rsa"}),
        ("bash", {"command": "cat ~/.ss*/id_rsa"}),
        ("bash", {"command": "tar czf x.tgz ~/.*"}),
        ("bash", {"command": "cat .e*"}),
        ("bash", {"command": "source .env && npm start"}),
        ("bash", {"command": "docker run --env-file=.env img"}),
        ("bash", {"command": "cp ~/.config/ama/auth.json /tmp/"}),
        ("bash", {"command": "d=.gnupg; ls ~/$d"}),
    ],
)
def test_secret_paths_ask_in_every_mode(tool: str, args: dict) -> None:
    for mode in ("allowlist", "default", "auto-edit", "full-auto"):
        d = decide(tool, args, ctx(mode, allow=["read", "bash", "grep", "ls", "find", "edit"]))
        assert (d.action, d.source) == ("ask", "secret"), (mode, d)
    assert decide(tool, args, ctx("full-auto", unattended=True)).action == "deny"


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("read", {"path": ".env.example"}),
        ("read", {"path": ".envrc"}),
        ("read", {"path": "src/env.py"}),
        ("ls", {"path": "/home/u"}),
        ("read", {"path": "/home/u/.sshd_config"}),
        ("bash", {"command": "python -m venv .venv && source .venv/bin/activate"}),
        ("bash", {"command": "node -e 'console.log(process.env.HOME)'"}),
        ("bash", {"command": "cp .env.example .env.sample"}),
        ("bash", {"command": "ls *"}),
        ("bash", {"command": "ssh-add -l"}),
    ],
)
def test_not_secret(tool: str, args: dict) -> None:
    assert decide(tool, args, ctx("full-auto")).action == "allow"


def test_allow_rules_that_name_a_secret_allow_it() -> None:
    c = ctx("default", allow=["read(~/.aws/config)", "read(.env)", "bash(cat ~/.aws/config)"])
    assert action("read", {"path": "~/.aws/config"}, c) == "allow"
    assert action("read", {"path": "~/.aws/credentials"}, c) == "ask"
    assert action("grep", {"pattern": "x", "path": "sub/.env"}, c) == "allow"
    assert action("bash", {"command": "cat ~/.aws/config"}, c) == "allow"
    assert action("bash", {"command": "cat ~/.aws/credentials"}, c) == "ask"


def test_protected_paths_can_be_named_by_allow_rules() -> None:
    c = ctx("auto-edit", allow=["edit(.git/hooks/**)"])
    assert action("write", {"path": ".git/hooks/pre-commit"}, c) == "allow"
    assert action("edit", {"path": ".ama/config.json"}, c) == "ask"
    assert (
        decide("edit", {"path": ".ama/config.json"}, ctx("auto-edit", allow=["edit"])).source == "protected"
    )


@pytest.mark.parametrize(
    ("hook", "mode", "expected", "source"),
    [
        (HookDecision("deny", "no"), "full-auto", "deny", "hook"),
        (HookDecision("allow"), "default", "allow", "hook"),
        (HookDecision("ask"), "full-auto", "ask", "hook"),
        (HookDecision("allow"), "plan", "deny", "mode"),
        (HookDecision(None), "default", "ask", "mode"),
        (HookOutcome("PreToolUse", "deny", "from a real outcome"), "default", "deny", "hook"),
    ],
)
def test_hook_verdicts(hook, mode: str, expected: str, source: str) -> None:
    d = decide("edit", {"path": "src/a.py"}, ctx(mode), hook=hook)
    assert (d.action, d.source) == (expected, source)


def test_hook_order_against_rules_and_dangers() -> None:
    allow_all = ctx("default", allow=["bash"], deny=["bash(make deploy:*)"])
    assert action("bash", {"command": "ls"}, allow_all, hook=HookDecision("deny")) == "deny"
    assert action("bash", {"command": "ls"}, allow_all, hook=HookDecision("ask")) == "ask"
    assert action("bash", {"command": "make deploy"}, allow_all, hook=HookDecision("allow")) == "deny"
    d = decide("bash", {"command": "sudo ls"}, ctx("default"), hook=HookDecision("allow"))
    assert (d.action, d.source) == ("ask", "dangerous")
    d = decide("read", {"path": "~/.ssh/id_rsa"}, ctx("default"), hook=HookDecision("allow"))
    assert (d.action, d.source) == ("ask", "secret")


def test_unattended_turns_ask_into_deny_with_a_reason() -> None:
    d = decide("edit", {"path": "src/a.py"}, ctx("default", unattended=True))
    assert (d.action, d.source) == ("deny", "unattended")
    assert d.reason.startswith("`edit` requires approval (default mode asks before `edit` changes files)")
    assert "unavailable in non-interactive mode" in d.reason
    assert action("edit", {"path": "src/a.py"}, ctx("auto-edit", unattended=True)) == "allow"
    assert action("read", {"path": "a"}, ctx("default", unattended=True)) == "allow"


def test_bad_mode_is_an_error() -> None:
    with pytest.raises(InvalidArguments, match="unknown permission mode 'yolo'"):
        ctx("yolo")


def test_paths_are_resolved_against_cwd_and_home() -> None:
    c = ctx("default", deny=["read(/ws/secret/**)", "edit(~/notes.md)"])
    assert action("read", {"path": "secret/a"}, c) == "deny"
    assert action("read", {"path": "./x/../secret/a"}, c) == "deny"
    assert action("read", {"path": "/ws/src/../secret/a"}, c) == "deny"
    assert action("edit", {"path": "~/notes.md"}, c) == "deny"
    assert action("edit", {"path": "/home/u/notes.md"}, c) == "deny"
    assert action("read", {"path": "/ws/secretary"}, c) == "allow"


def test_tool_names_are_case_insensitive() -> None:
    c = ctx("default", allow=["WebFetch"], deny=["Bash(rm:*)"])
    assert action("webfetch", {}, c) == "allow"
    assert action("WEBFETCH", {}, c) == "allow"
    assert action("Bash", {"command": "rm x"}, c) == "deny"
