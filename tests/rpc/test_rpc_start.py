"""The start of ``ama --mode rpc`` (rpc/start.py): the ``get_state`` lines waiting before the
agent is finished are answered from the first step of its build, with the very data the
finished agent gives; everything else, and the order of the protocol, is as before."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from tests.agent.helpers import write_script
from tests.conftest import ama_cmd


def _config(home: Path, **extra: object) -> None:
    models = [{"id": "m", "contextWindow": 100000, "maxTokens": 4096}]
    local = {"api": "openai-completions", "baseUrl": "http://127.0.0.1:9/v1", "apiKey": "x", "models": models}
    chan = {**local, "channel": "beta"}
    (home / "config.json").write_text(json.dumps({"providers": {"local": local, "chan": chan}, **extra}))


def _run(cwd: Path, data: bytes, *args: str) -> tuple[int, list[dict], str]:
    p = subprocess.run(ama_cmd("--mode", "rpc", *args), input=data, cwd=cwd, capture_output=True, timeout=60)
    return p.returncode, [json.loads(x) for x in p.stdout.splitlines()], p.stderr.decode()


def _lines(*objs: dict) -> bytes:
    return b"".join(json.dumps(o).encode() + b"\n" for o in objs)


def _early_and_late(cwd: Path, *args: str) -> tuple[dict, dict, list[dict]]:
    """get_state before the agent is finished (the first line) and after (past get_commands)."""
    data = _lines(
        {"type": "get_state", "id": "early"}, {"type": "get_commands", "id": "c"}, {"type": "get_state", "id": "late"}
    )
    rc, lines, err = _run(cwd, data, *args)
    assert rc == 0, err
    res = {m.get("id"): m for m in lines if m["type"] == "response"}
    assert res["early"]["success"] and res["late"]["success"], lines
    return res["early"]["data"], res["late"]["data"], lines


def test_early_get_state_is_the_finished_agents(tmp_path: Path, ama_home: Path) -> None:
    _config(ama_home, permissionMode="auto-edit", thinkingLevel="high")
    cases = [
        ("--model", "local/m"),
        ("--model", "chan/m", "--no-session"),  # a channel; no session file
        ("--model", "local/m", "--thinking", "low", "--permission-mode", "full-auto"),
        ("--model", "local/m", "--permission-mode", "allowlist", "--session-dir", str(tmp_path / "elsewhere")),
    ]
    for args in cases:
        early, late, _ = _early_and_late(tmp_path, *args)
        assert early == late, args
    early, _, _ = _early_and_late(tmp_path, *cases[1])
    assert early["model"] == {"provider": "chan", "id": "m", "channel": "beta"}
    assert early["sessionFile"] is None
    early, _, _ = _early_and_late(tmp_path, *cases[2])
    assert (early["thinkingLevel"], early["permissionMode"]) == ("low", "full-auto")
    early, _, _ = _early_and_late(tmp_path, *cases[3])
    assert early["sessionFile"].startswith(str(tmp_path / "elsewhere"))
    assert not Path(early["sessionFile"]).exists()  # a new session's file appears with its first entry


def test_plan_mode_state_comes_from_the_finished_agent(tmp_path: Path, ama_home: Path) -> None:
    """In plan mode ``plan.model`` replaces the model when the agent is built: the first
    get_state waits for it."""
    _config(ama_home, plan={"model": "chan/m"})
    early, late, _ = _early_and_late(tmp_path, "--model", "local/m", "--permission-mode", "plan")
    assert early == late
    assert early["model"]["provider"] == "chan" and early["permissionMode"] == "plan"


def _resumable(tmp_path: Path, ama_home: Path, plan_active: bool | None) -> str:
    """A session file with entries (and an ``ama.plan_state`` record when asked)."""
    from ama.messages import UserMessage
    from ama.session.store import Session

    s = Session.create(str(tmp_path), ama_home / "sessions")
    s.append_message(UserMessage(content="hello", timestamp=1))
    s.append_model_change("local", "m")
    if plan_active is not None:
        s.append_custom("ama.plan_state", {"active": plan_active, "prePlanMode": "default"})
    s.close()
    assert s.path is not None
    return s.path


def test_a_resumed_session_is_answered_early_unless_it_goes_back_into_plan_mode(
    tmp_path: Path, ama_home: Path
) -> None:
    """A resumed session's state is known from the first step too (the second step's
    warning comes after the early answer); one whose plan state is active gets its answer
    from the finished agent, in plan mode (an explicit mode wins, and is answered early)."""
    _config(ama_home, permissions={"allow": ["bash("]})
    data = _lines({"type": "get_state", "id": "early"}, {"type": "get_tools", "id": "t"}, {"type": "get_state", "id": "late"})
    for plan_active, extra, early_answer, mode in [
        (None, (), True, "default"),
        (False, (), True, "default"),
        (True, (), False, "plan"),
        (True, ("--permission-mode", "auto-edit"), True, "auto-edit"),
    ]:
        path = _resumable(tmp_path, ama_home, plan_active)
        rc, lines, err = _run(tmp_path, data, "--model", "local/m", "--resume", path, *extra)
        assert rc == 0, err
        kinds = [m["type"] if m["type"] != "notification" else m["level"] for m in lines]
        if early_answer:
            assert kinds == ["hello", "session_start", "response", "warn", "response", "response"], (plan_active, lines)
        else:
            assert kinds == ["hello", "session_start", "warn", "response", "response", "response"], (plan_active, lines)
        res = {m.get("id"): m["data"] for m in lines if m["type"] == "response"}
        assert res["early"] == res["late"], (plan_active, extra)
        assert res["early"]["permissionMode"] == mode and res["early"]["sessionFile"] == path


def test_order_and_warnings_of_both_steps(tmp_path: Path, ama_home: Path) -> None:
    """hello, the configuration's warnings, session_start, the early answers; the warnings of
    the second step (a bad permission rule) before the first response that needed it."""
    _config(ama_home, noSuchKey=1, permissions={"allow": ["bash("]})
    data = _lines({"type": "get_state", "id": 1}, {"type": "get_state"}, {"type": "get_tools", "id": "t"})
    rc, lines, err = _run(tmp_path, data, "--model", "local/m")
    assert rc == 0, err
    kinds = [m["type"] if m["type"] != "notification" else m["level"] for m in lines]
    assert kinds == ["hello", "warn", "session_start", "response", "response", "warn", "response"], lines
    assert "noSuchKey" in lines[1]["message"]
    assert lines[5]["message"].startswith("permissions.allow[0]: bad rule")
    assert [m.get("id") for m in lines if m["type"] == "response"] == [1, None, "t"]
    first, second = lines[3], lines[4]
    assert "id" not in second and second["data"] == first["data"]


def test_a_line_written_in_pieces_and_crlf(tmp_path: Path, ama_home: Path) -> None:
    """The start-up reads what is there: half a line waits for its end; \\r\\n is a line end."""
    _config(ama_home)
    p = subprocess.Popen(
        ama_cmd("--mode", "rpc", "--model", "local/m", "--no-session"), cwd=tmp_path,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert p.stdin and p.stdout
    assert json.loads(p.stdout.readline())["type"] == "hello"
    assert json.loads(p.stdout.readline())["type"] == "session_start"
    p.stdin.write(b'{"type":"get_st')
    p.stdin.flush()
    time.sleep(0.05)
    p.stdin.write(b'ate","id":"a"}\r\n{"type":"get_state","id":"b"}\n')
    p.stdin.flush()
    a = json.loads(p.stdout.readline())
    b = json.loads(p.stdout.readline())
    assert (a["id"], b["id"]) == ("a", "b") and a["data"] == b["data"]
    time.sleep(0.3)  # past the wait: the agent is finished; the next line is the server's
    p.stdin.write(b'{"type":"get_state","id":"c"}\n')
    p.stdin.flush()
    c = json.loads(p.stdout.readline())
    assert c["id"] == "c" and c["data"] == a["data"]
    p.stdin.close()
    assert p.wait(30) == 0, p.stderr.read() if p.stderr else ""


def test_bad_first_lines_are_answered_by_the_server(tmp_path: Path, ama_home: Path) -> None:
    _config(ama_home)
    data = b'{"type":"get_state","id":"x"\n[1]\n\n{"type":"get_state","id":"ok"}\n'
    rc, lines, err = _run(tmp_path, data, "--model", "local/m", "--no-session")
    assert rc == 0, err
    res = [m for m in lines if m["type"] == "response"]
    assert [(m.get("id"), m["success"]) for m in res] == [("x", False), (None, False), (None, False), ("ok", True)]
    assert [m["error"]["code"] for m in res[:3]] == ["parse_error"] * 3


def test_start_errors_stop_before_session_start(tmp_path: Path, ama_home: Path) -> None:
    _config(ama_home)
    for args, needle in [
        (("--model", "local/nope"), "unknown model 'local/nope'"),
        (("--model", "local/m", "--fallback-model", "nope/x"), "unknown provider 'nope'"),
        (("--model", "local/m", "--resume"), "--resume needs a session id"),
        (("--model", "local/m", "--max-cost", "-1"), "--max-cost"),
    ]:
        rc, lines, err = _run(tmp_path, _lines({"type": "get_state", "id": 1}), *args)
        assert rc == 1, (args, lines, err)
        assert [m["type"] for m in lines] == ["hello", "notification"], args
        assert lines[1]["level"] == "error" and needle in lines[1]["message"], (args, lines[1])


def test_scripted_model_session_runs_after_an_early_get_state(tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", ["hi there"])
    data = _lines({"type": "get_state", "id": "s"}, {"type": "prompt", "id": "p", "message": "hello"})
    rc, lines, err = _run(tmp_path, data, "--model", model)
    assert rc == 0, err
    state = next(m for m in lines if m.get("id") == "s")["data"]
    ends = [m for m in lines if m["type"] == "message_end" and m["message"]["role"] == "assistant"]
    assert ends and ends[-1]["message"]["content"][0]["text"] == "hi there"
    assert Path(state["sessionFile"]).exists()  # the session the early answer named is the one written


def test_unsupported_commands_are_declared_where_the_start_up_sees_them() -> None:
    """get_state lists the unsupported commands also before rpc/commands.py loads: the table
    lives in rpc/start.py, and each of its commands has a handler answering ``unsupported``."""
    from ama.rpc import commands, start

    assert commands.UNSUPPORTED is start.UNSUPPORTED
    assert set(start.UNSUPPORTED) <= set(commands.HANDLERS)
