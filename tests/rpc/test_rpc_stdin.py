"""stdin of ``ama --mode rpc`` as a regular file or /dev/null; ids of broken lines; the
command named in every response."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.agent.helpers import write_script
from tests.conftest import ama_cmd


def _run(tmp_path: Path, stdin, *args: str) -> tuple[int, list[dict], str]:
    p = subprocess.run(ama_cmd("--mode", "rpc", *args), stdin=stdin, cwd=tmp_path, capture_output=True, timeout=60)
    return p.returncode, [json.loads(x) for x in p.stdout.splitlines()], p.stderr.decode()


def _responses(lines: list[dict]) -> dict:
    return {m.get("id"): m for m in lines if m["type"] == "response"}


def test_stdin_a_regular_file_reads_every_line_finishes_the_runs_and_exits_zero(tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", ["first reply", "second reply"])
    cmds = tmp_path / "commands.jsonl"
    cmds.write_text(
        '{"type":"get_state","id":"s1"}\n'
        '{"type":"prompt","id":"p1","message":"one"}\n'
        '{"type":"prompt","id":"p2","message":"two","streamingBehavior":"followUp"}\n'
    )
    with cmds.open("rb") as f:
        rc, lines, err = _run(tmp_path, f, "--model", model)
    assert rc == 0, err
    assert "Traceback" not in err
    res = _responses(lines)
    assert res["s1"]["success"] and res["p1"]["success"] and res["p2"]["success"]
    texts = [m["message"]["content"][0]["text"] for m in lines if m["type"] == "message_end" and m["message"]["role"] == "assistant"]
    assert texts == ["first reply", "second reply"]
    assert lines[-1]["type"] == "agent_settled"


def test_stdin_dev_null_exits_zero_after_start_up(tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", ["unused"])
    with open("/dev/null", "rb") as f:
        rc, lines, err = _run(tmp_path, f, "--model", model)
    assert rc == 0, err
    assert [m["type"] for m in lines] == ["hello", "session_start"]


def test_broken_lines_keep_their_ids(tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", ["unused"])
    late = b'{"type":"prompt","message":"' + b"x" * (5 * 1024 * 1024) + b'","id":"late"}\n'
    data = (
        b'{"type":"get_state","message":"caf\xff","id":"utf8"}\n'
        + late
        + b'{"type":"get_state","id":42}\n'
    )
    with data_file(tmp_path, data) as f:
        rc, lines, err = _run(tmp_path, f, "--model", model)
    assert rc == 0, err
    res = _responses(lines)
    assert res["utf8"]["error"]["code"] == "parse_error" and res["utf8"]["command"] == "get_state"
    assert res["late"]["error"]["code"] == "too_large" and res["late"]["command"] == "prompt"
    assert res[42]["success"]


def data_file(tmp_path: Path, data: bytes):
    path = tmp_path / "in.jsonl"
    path.write_bytes(data)
    return path.open("rb")


def test_steer_and_follow_up_while_idle_answer_as_themselves(tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", ["a", "b"])
    data = b'{"type":"steer","id":"s","message":"one"}\n'
    with data_file(tmp_path, data) as f:
        rc, lines, err = _run(tmp_path, f, "--model", model)
    assert rc == 0, err
    assert _responses(lines)["s"]["command"] == "steer"
    data = b'{"type":"follow_up","id":"f","message":"two"}\n'
    with data_file(tmp_path, data) as f:
        rc, lines, err = _run(tmp_path, f, "--model", model)
    assert rc == 0, err
    assert _responses(lines)["f"]["command"] == "follow_up"


def test_stdin_closed_exits_zero_after_start_up(tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", ["unused"])
    argv = ["sh", "-c", 'exec "$@" <&-', "sh", *ama_cmd("--mode", "rpc", "--model", model)]
    p = subprocess.run(argv, cwd=tmp_path, capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert [json.loads(x)["type"] for x in p.stdout.splitlines()] == ["hello", "session_start"]
