"""Run one command the way the bash tool does, and report what happened on the host side.

    python runner.py '{"command": "...", "cwd": "/ws", ...}'   ->  one JSON object on stdout

Used by the escape tests so that the same sequence (make_bash_sandbox, wrap, spawn with
start_new_session, killpg on timeout, close) runs as root and as an unprivileged user.
Request keys: command, cwd, network (session setting), call_network (per call), writable
(sandbox.writable), env_allow (sandbox.env), allow_secrets (sandbox.allowSecrets), max_processes
(sandbox.maxProcesses), kill_when (a path: SIGKILL the process group once
it exists, like a timeout would), probe (only report detect()).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time


def main() -> int:
    req = json.loads(sys.argv[1])
    from ama.sandbox import detect, make_bash_sandbox, spawn

    if req.get("probe"):
        print(json.dumps(detect().to_json()))
        return 0
    config = {
        "sandbox.bash": "auto",
        "sandbox.network": req.get("network", "deny"),
        "sandbox.writable": req.get("writable", []),
        "sandbox.env": req.get("env_allow", []),
        "sandbox.allowSecrets": req.get("allow_secrets", []),
        "sandbox.maxProcesses": req.get("max_processes", 1024),
    }
    cwd = req["cwd"]
    os.environ["AMA_TEST_AGENT_PID"] = str(os.getpid())  # the "agent" the sandbox must not reach
    sandbox = make_bash_sandbox(config, cwd=cwd, data_dir=os.environ["AMA_HOME"], session_id="test")
    result: dict = {
        "active": sandbox.active,
        "explanation": sandbox.status.explanation,
        "warnings": sandbox.warnings,
    }
    if not sandbox.active:
        print(json.dumps(result))
        return 0
    wrapped = sandbox.wrap(req["command"], cwd=cwd, network=req.get("call_network"))
    proc = spawn(
        wrapped.argv,
        env=wrapped.env,
        pass_fds=wrapped.pass_fds,
        cwd=cwd,
        start_new_session=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    wrapped.close()
    killed = False
    kill_when = req.get("kill_when")
    if kill_when:
        deadline = time.monotonic() + 30
        while not os.path.exists(kill_when) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        os.killpg(proc.pid, signal.SIGKILL)  # what the bash tool does on timeout
        killed = True
    out, _ = proc.communicate(timeout=60)
    output = out.decode("utf-8", "replace")
    tmp_files = {}
    for name in os.listdir(sandbox.tmpdir):
        path = os.path.join(sandbox.tmpdir, name)
        if os.path.isfile(path):
            with open(path, encoding="utf-8", errors="replace") as f:
                tmp_files[name] = f.read()
    result.update(
        exit=proc.returncode,
        output=output,
        killed=killed,
        hint=sandbox.hint(output, proc.returncode, network=req.get("call_network")),
        tmpdir=sandbox.tmpdir,
        tmp_files=tmp_files,
    )
    sandbox.close()
    result["tmpdir_removed"] = not os.path.exists(sandbox.tmpdir)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
