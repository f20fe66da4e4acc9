"""Start-up errors of the agent command: exit codes and the JSON error object."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.agent.helpers import write_script
from tests.conftest import ama_cmd


def _ama(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(ama_cmd(*args), cwd=cwd, capture_output=True, text=True, timeout=60)


def test_unknown_model_is_a_bad_argument_with_did_you_mean(tmp_path: Path) -> None:
    p = _ama(tmp_path, "-p", "hi", "--model", "openai/gpt-4.1x")
    assert p.returncode == 2, p.stderr
    assert "unknown model 'openai/gpt-4.1x'" in p.stderr and "did you mean" in p.stderr
    assert "Traceback" not in p.stderr
    p = _ama(tmp_path, "-p", "hi", "--model", "nosuch/model")
    assert p.returncode == 2 and "unknown provider 'nosuch'" in p.stderr


@pytest.mark.parametrize("fmt", ["json", "stream-json"])
def test_start_up_errors_print_one_json_error_object(tmp_path: Path, fmt: str) -> None:
    p = _ama(tmp_path, "-p", "hi", "--model", "nosuch/model", "--output-format", fmt)
    assert p.returncode == 2
    (line,) = p.stdout.splitlines()
    obj = json.loads(line)
    assert obj["type"] == "error" and obj["exitCode"] == 2
    assert obj["error"]["code"] == "invalid_arguments" and "nosuch" in obj["error"]["message"]
    p = _ama(tmp_path, "-p", "hi", f"--output-format={fmt}", "--thinking", "bogus")
    assert p.returncode == 2
    (line,) = p.stdout.splitlines()
    assert "bogus" in json.loads(line)["error"]["message"]
    model = write_script(tmp_path / "s.json", ["ok"])
    p = _ama(tmp_path, "-p", "hi", "--model", model, "--output-format", fmt, "--resume", "ffffffff")
    assert p.returncode == 5  # a session that is not there keeps 000's code
    assert json.loads(p.stdout.splitlines()[-1])["error"]["code"] == "not_found"


def test_text_output_prints_no_json(tmp_path: Path) -> None:
    p = _ama(tmp_path, "-p", "hi", "--model", "nosuch/model")
    assert p.returncode == 2 and p.stdout == ""
