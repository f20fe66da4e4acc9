"""The environment bash commands see, through the real ``ama -p``: credentials are dropped
by name and by value, unsandboxed and under bwrap; ``sandbox.envAllow`` keeps one."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from ama.sandbox import SandboxStatus
from ama.tools.bash_env import scrub_env
from tests.agent.helpers import write_script
from tests.conftest import ama_cmd

# built here, never stored whole (push protection)
GH = "ghp_" + "Z9" * 18
CREDENTIALS = {
    "DATABASE_URL": "postgres://app:" + "S3cretPW" + "@db.internal:5432/prod",
    "MY_PASS": "hunter2",
    "NPM_CONFIG__AUTH": "dXNlcjpwYXNz",
    "HARMLESS_LOOKING": GH,  # caught by its value
    "WEBHOOK": "https://hooks.slack.com/services/T0000/B0000/" + "Xx" * 12,
    "OPENAI_API_KEY": "sk-" + "a1" * 20,
    "CI_JOB_TOKEN": "abc",
    "MY_SECRET_THING": "x",
    "SIGNING_KEY": "y",
}
KEPT = {
    "PLAIN_SETTING": "hello world",
    "SSH_AUTH_SOCK": "/tmp/agent.sock",
    "VSCODE_GIT_ASKPASS_NODE": "/usr/share/code/code",
    "TOKENIZERS_PARALLELISM": "false",
    "GITHUB_TOKEN": "gho_" + "Q7" * 18,  # allowed on purpose by sandbox.envAllow
    "DATABASE_HOST": "db.internal",
}


def run_env_dump(tmp_path: Path, ama_home: Path, sandbox: dict) -> dict[str, str]:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ama_home / "config.json").write_text(json.dumps({"sandbox": {"envAllow": ["GITHUB_TOKEN"], **sandbox}}))
    call = {"name": "bash", "arguments": {"command": "env -0 > env.dump"}}
    model = write_script(tmp_path / "s.json", [{"toolCalls": [call]}, "done"])
    env = {**os.environ, **CREDENTIALS, **KEPT}
    p = subprocess.run(
        ama_cmd("-p", "dump env", "--model", model, "--permission-mode", "full-auto"),
        cwd=ws, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert p.returncode == 0, (p.stdout, p.stderr)
    raw = (ws / "env.dump").read_bytes().decode()
    return dict(item.split("=", 1) for item in raw.split("\0") if "=" in item)


def check(seen: dict[str, str]) -> None:
    for name in CREDENTIALS:
        assert name not in seen, (name, seen.get(name))
    for secret in CREDENTIALS.values():
        assert all(secret not in v for v in seen.values() if len(secret) > 5)
    for name, value in KEPT.items():
        assert seen.get(name) == value, name
    assert "PATH" in seen and "HOME" in seen


def test_unsandboxed_bash_sees_no_credentials(tmp_path: Path, ama_home: Path) -> None:
    seen = run_env_dump(tmp_path, ama_home, {"bash": "off"})
    check(seen)
    assert not os.path.basename(seen.get("TMPDIR", "")).startswith("ama-")  # really unsandboxed


def test_bwrap_sandboxed_bash_sees_no_credentials(
    tmp_path: Path, ama_home: Path, bwrap_status: SandboxStatus
) -> None:
    seen = run_env_dump(tmp_path, ama_home, {"bash": "auto"})
    check(seen)
    assert os.path.basename(seen["TMPDIR"]).startswith("ama-")  # the sandbox's private TMPDIR


def test_scrub_reasons_and_allow_globs() -> None:
    kept, removed = scrub_env({**CREDENTIALS, **KEPT}, allow=["GITHUB_*"], deny=["DATABASE_HOST"])
    assert removed["DATABASE_URL"] == "value: url-credentials"
    assert removed["HARMLESS_LOOKING"] == "value: github-token"
    assert removed["WEBHOOK"] == "value: slack-webhook-url"
    assert removed["MY_PASS"] == removed["NPM_CONFIG__AUTH"] == "name"
    assert removed["DATABASE_HOST"] == "name"  # denied by name (a provider's key variable)
    assert kept["GITHUB_TOKEN"] == KEPT["GITHUB_TOKEN"]
    assert kept["SSH_AUTH_SOCK"] == "/tmp/agent.sock"


@pytest.mark.parametrize(
    "value", ["postgres://:pw@h/db", "Bearer abcdef123456", "-----BEGIN PRIVATE KEY-----\nx"]
)
def test_values_that_are_credentials(value: str) -> None:
    assert scrub_env({"V": value})[0] == {}
