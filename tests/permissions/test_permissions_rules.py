"""Rule syntax, errors that name the bad rule, and matching (commands, prefixes, globs, paths)."""

from __future__ import annotations

import pytest

from ama.errors import InvalidArguments
from ama.permissions import Rule, Rules

CWD, HOME = "/ws", "/home/u"


@pytest.mark.parametrize(
    ("text", "tool", "kind", "pattern"),
    [
        ("grep", "grep", "any", ""),
        ("bash", "bash", "any", ""),
        ("Bash(npm test)", "bash", "exact", "npm test"),
        ("bash(  npm   test )", "bash", "exact", "npm test"),
        ("bash(git status:*)", "bash", "prefix", "git status"),
        ("bash(npm run test:*)", "bash", "prefix", "npm run test"),
        ("bash(npm run *)", "bash", "glob", "npm run *"),
        ("bash(*)", "bash", "any", ""),
        ("bash(echo (x))", "bash", "exact", "echo (x)"),
        ("read(.env)", "read", "path", ".env"),
        ("edit(src/**)", "edit", "path", "src/**"),
        ("write(/tmp/*)", "write", "path", "/tmp/*"),
        ("read(**)", "read", "any", ""),
        ("mcp_tool", "mcp_tool", "any", ""),
    ],
)
def test_parse(text: str, tool: str, kind: str, pattern: str) -> None:
    rule = Rule.parse(text)
    assert (rule.tool, rule.kind, rule.pattern) == (tool, kind, pattern)


def test_str_round_trips() -> None:
    for text in ["grep", "bash(npm test)", "bash(git status:*)", "bash(npm run *)", "read(.env)"]:
        assert str(Rule.parse(text)) == text
        assert Rule.parse(str(Rule.parse(text))) == Rule.parse(text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("bash(npm test", "missing ')'"),
        ("bash()", "empty pattern"),
        ("", "expected 'tool' or 'tool(pattern)'"),
        ("9lives", "expected 'tool' or 'tool(pattern)'"),
        ("todo(get)", "todo takes no pattern"),
    ],
)
def test_bad_rules_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(InvalidArguments) as err:
        Rule.parse(text)
    assert message in err.value.message
    assert repr(text) in err.value.message


def test_rules_parse_names_list_and_index() -> None:
    with pytest.raises(InvalidArguments) as err:
        Rules.parse(allow=["grep"], deny=["read(.env)", "bash(rm"])
    assert err.value.message == "permissions.deny[1]: bad rule 'bash(rm': missing ')'"
    assert err.value.code == "invalid_arguments"


def test_rules_parse_lenient_collects_errors() -> None:
    errors: list[str] = []
    rules = Rules.parse(allow=["grep", "bash("], ask=[42], errors=errors)  # type: ignore[list-item]
    assert rules.allow == (Rule("grep"),)
    assert rules.ask == ()
    assert errors[0].startswith("permissions.allow[1]: bad rule 'bash('")
    assert errors[1].startswith("permissions.ask[0]: bad rule 42")


def test_from_config_reads_the_three_keys() -> None:
    config = {"permissions.allow": ["bash(npm test)"], "permissions.deny": ["read(.env)"]}
    rules = Rules.from_config(config)
    assert rules.allow == (Rule("bash", "exact", "npm test"),)
    assert rules.deny == (Rule("read", "path", ".env"),)
    assert rules.ask == ()


@pytest.mark.parametrize(
    ("rule", "command", "expected"),
    [
        ("bash(npm test)", "npm test", True),
        ("bash(npm test)", "npm  test", True),
        ("bash(npm test)", "npm test --watch", False),
        ("bash(git status:*)", "git status", True),
        ("bash(git status:*)", "git status --short", True),
        ("bash(git status:*)", "git statusx", False),
        ("bash(git status:*)", "git stash", False),
        ("bash(npm run *)", "npm run build", True),
        ("bash(npm run *)", "npm test", False),
        ("bash(*.sh)", "./x.sh", True),
        ("bash", "anything at all", True),
    ],
)
def test_command_matching(rule: str, command: str, expected: bool) -> None:
    assert Rule.parse(rule).matches_command(command) is expected


@pytest.mark.parametrize(
    ("rule", "path", "expected"),
    [
        ("read(.env)", "/ws/.env", True),
        ("read(.env)", "/ws/deep/sub/.env", True),
        ("read(.env)", "/elsewhere/.env", True),
        ("read(.env)", "/ws/.envrc", False),
        ("read(.env)", "/ws/x.env", False),
        ("read(*.pem)", "/ws/certs/key.pem", True),
        ("read(*.pem)", "/ws/certs/key.pem.txt", False),
        ("edit(src/**)", "/ws/src/a.py", True),
        ("edit(src/**)", "/ws/src/deep/b.py", True),
        ("edit(src/**)", "/ws/lib/src/a.py", False),
        ("edit(./src/*.py)", "/ws/src/a.py", True),
        ("edit(src/*.py)", "/ws/src/deep/a.py", False),
        ("edit(**/secret.txt)", "/ws/a/b/secret.txt", True),
        ("write(/tmp/*)", "/tmp/a", True),
        ("write(/tmp/*)", "/tmp/a/b", True),  # a pattern covers what is below what it matches
        ("write(/tmp/*)", "/var/tmp/a", False),
        ("read(~/.aws/**)", "/home/u/.aws/config", True),
        ("read(~/.aws)", "/home/u/.aws/credentials", True),
        ("read(~/.aws)", "/home/u/.awsx", False),
        ("read(/etc/host?)", "/etc/hosts", True),
        ("read(/etc/[a-h]osts)", "/etc/hosts", True),
        ("read(/etc/[!a-h]osts)", "/etc/hosts", False),
        ("read", "/anything", True),
    ],
)
def test_path_matching(rule: str, path: str, expected: bool) -> None:
    assert Rule.parse(rule).matches_path(path, cwd=CWD, home=HOME) is expected


def test_families() -> None:
    assert Rule.parse("read(.env)").applies_to("grep")
    assert Rule.parse("read(.env)").applies_to("ls")
    assert Rule.parse("edit(src/**)").applies_to("write")
    assert Rule.parse("write(/tmp/*)").applies_to("edit")
    assert not Rule.parse("grep").applies_to("read")
    assert not Rule.parse("read").applies_to("edit")
    assert not Rule.parse("bash").applies_to("read")
