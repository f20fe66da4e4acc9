"""RPC benchmarks: start-up, command round trip, and streaming throughput; ama and (when
installed) pi, against the same local OpenAI-compatible server.

    python bench/bench_rpc.py [--runs 10] [--pi /path/to/pi] [--baseline <tree>/src] [--write]

* start → `hello` (ama) and start → first `get_state` response (both), fresh processes;
* `get_state` round trip inside a running process (median of 100);
* a long streamed reply (--words deltas): `message_update` events per second at the client
  and bytes written per delta (ama sends the delta only; pi resends the partial message);
* with --baseline: start-up of this tree and of another tree's ``src/``, runs interleaved
  (this machine is shared: back-to-back series drift with its load), as median wall time
  to ``hello`` and to the first ``get_state`` response, the CPU time the process (its main thread)
  had used when that response came (Linux), and the CPU time (user + system) of the whole process, which
  goes on loading what the response did not need before it exits; and ``python -c pass``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SECTION = "## RPC"


class Proc:
    def __init__(self, argv: list[str], env: dict, cwd: str) -> None:
        self.t0 = time.perf_counter()
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
        self.bytes = 0

    def send(self, obj: dict) -> None:
        self.p.stdin.write(json.dumps(obj).encode() + b"\n")
        self.p.stdin.flush()

    def read(self) -> dict:
        line = self.p.stdout.readline()
        if not line:
            raise EOFError
        self.bytes += len(line)
        return json.loads(line)

    def until(self, pred) -> dict:
        while True:
            m = self.read()
            if pred(m):
                return m

    def close(self) -> None:
        self.p.stdin.close()
        try:
            self.p.wait(10)
        except subprocess.TimeoutExpired:
            self.p.kill()


def measure(name: str, argv: list[str], env: dict, cwd: str, runs: int, long_argv: list[str], has_hello: bool) -> dict:
    hello, first_state, rtt = [], [], []
    for _ in range(runs):
        pr = Proc(argv, env, cwd)
        pr.send({"type": "get_state", "id": "s0"})
        if has_hello:
            pr.until(lambda m: m.get("type") == "hello")
            hello.append((time.perf_counter() - pr.t0) * 1000)
        pr.until(lambda m: m.get("type") == "response" and m.get("id") == "s0")
        first_state.append((time.perf_counter() - pr.t0) * 1000)
        pr.close()
    pr = Proc(argv, env, cwd)
    pr.send({"type": "get_state", "id": "w"})
    pr.until(lambda m: m.get("id") == "w")
    for i in range(100):
        t = time.perf_counter()
        pr.send({"type": "get_state", "id": f"r{i}"})
        pr.until(lambda m, i=i: m.get("id") == f"r{i}")
        rtt.append((time.perf_counter() - t) * 1000)
    pr.close()
    # streaming throughput
    pr = Proc(long_argv, env, cwd)
    pr.send({"type": "prompt", "message": "write a lot", "id": "p"})
    updates = 0
    first = last = 0.0
    start_bytes = 0
    while True:
        m = pr.read()
        t = m.get("type")
        if t == "message_update":
            if updates == 0:
                first = time.perf_counter()
                start_bytes = pr.bytes
            updates += 1
            last = time.perf_counter()
        if t in ("agent_settled", "agent_end") and updates:
            break
    update_bytes = pr.bytes - start_bytes
    pr.close()
    return {
        "name": name,
        "hello_ms": round(statistics.median(hello), 1) if hello else None,
        "first_state_ms": round(statistics.median(first_state), 1),
        "rtt_ms": round(statistics.median(rtt), 3),
        "updates": updates,
        "events_per_s": round(updates / (last - first)) if last > first else None,
        "bytes_per_update": round(update_bytes / max(1, updates)),
    }


def _cpu_now(pid: int) -> float | None:
    """CPU time (ms) the process's main thread has run so far (Linux: /proc/<pid>/schedstat), else None."""
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[0]) / 1e6
    except (OSError, ValueError, IndexError):
        return None


def startup_ab(trees: list[tuple[str, dict]], argv: list[str], cwd: str, runs: int) -> list[dict]:
    """Start -> ``hello`` and -> first get_state for each ``(name, env)``, one run of each in
    turn; CPU (user + system) up to that response and of the whole process (which goes on
    building what the response did not need, then exits at the end of stdin)."""
    keys = ("hello", "first", "cpu_first", "cpu")
    got: dict[str, dict[str, list[float]]] = {n: {k: [] for k in keys} for n, _ in trees}
    for i in range(runs + 1):  # the first round warms the caches
        for name, env in trees:
            pr = Proc(argv, env, cwd)
            pr.send({"type": "get_state", "id": "s0"})
            pr.until(lambda m: m.get("type") == "hello")
            hello = (time.perf_counter() - pr.t0) * 1000
            pr.until(lambda m: m.get("type") == "response" and m.get("id") == "s0")
            dt = (time.perf_counter() - pr.t0) * 1000
            cpu_first = _cpu_now(pr.p.pid)
            pr.p.stdin.close()
            _, _, usage = os.wait4(pr.p.pid, 0)
            pr.p.returncode = 0
            if i:
                got[name]["hello"].append(hello)
                got[name]["first"].append(dt)
                if cpu_first is not None:
                    got[name]["cpu_first"].append(cpu_first)
                got[name]["cpu"].append((usage.ru_utime + usage.ru_stime) * 1000)

    def med(xs: list[float]) -> float | None:
        return round(statistics.median(xs), 1) if xs else None

    return [{"name": n, "hello_ms": med(g["hello"]), "first_state_ms": med(g["first"]),
             "cpu_first_ms": med(g["cpu_first"]), "cpu_ms": med(g["cpu"])} for n, g in got.items()]  # fmt: skip


def _floor(runs: int) -> dict:
    """``python -c pass``: wall and CPU medians, the interpreter's start under every row."""
    wall, cpu = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        p = subprocess.Popen([sys.executable, "-c", "pass"])
        _, _, usage = os.wait4(p.pid, 0)
        wall.append((time.perf_counter() - t0) * 1000)
        cpu.append((usage.ru_utime + usage.ru_stime) * 1000)
    return {"wall_ms": round(statistics.median(wall), 1), "cpu_ms": round(statistics.median(cpu), 1)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--words", type=int, default=5000)
    ap.add_argument("--pi", default=os.environ.get("PI_BIN"), help="pi's executable (optional)")
    ap.add_argument("--baseline", help="another tree's src/ directory: start-up measured interleaved with this one")
    ap.add_argument("--write", action="store_true")
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ama-rpc-bench-"))
    from harness import start_server

    local, local_port = start_server()  # ports chosen by the OS
    long, long_port = start_server("--words", str(a.words))
    servers = [local, long]
    models = [{"id": "bench", "name": "bench", "reasoning": False, "input": ["text"], "contextWindow": 100000,
               "maxTokens": 4096, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}]  # fmt: skip
    providers = {
        "local": {"api": "openai-completions", "baseUrl": f"http://127.0.0.1:{local_port}/v1", "apiKey": "x", "models": models},
        "long": {"api": "openai-completions", "baseUrl": f"http://127.0.0.1:{long_port}/v1", "apiKey": "x", "models": models},
    }
    (work / "config.json").write_text(json.dumps({"providers": providers}))
    (work / "models.json").write_text(json.dumps({"providers": providers}))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(AMA_HOME=str(work), PI_CODING_AGENT_DIR=str(work))
    import compileall

    compileall.compile_dir(str(ROOT / "src"), quiet=1)
    results = []
    ab: list[dict] = []
    floor: dict = {}
    try:
        ama = [sys.executable, "-m", "ama", "--mode", "rpc", "--no-session"]
        results.append(measure("ama", [*ama, "--model", "local/bench"], env, str(work), a.runs,
                               [*ama, "--model", "long/bench"], True))  # fmt: skip
        if a.baseline:
            trees = [("this tree", {**env, "PYTHONPATH": str(ROOT / "src")}),
                     ("baseline", {**env, "PYTHONPATH": a.baseline})]  # fmt: skip
            ab = startup_ab(trees, [*ama, "--model", "local/bench"], str(work), a.runs)
            floor = _floor(a.runs)
        if a.pi:
            pi = [a.pi, "--mode", "rpc", "--no-session", "--provider"]
            results.append(measure("pi", [*pi, "local", "--model", "bench"], env, str(work), a.runs,
                                   [*pi, "long", "--model", "bench"], False))  # fmt: skip
    finally:
        for s in servers:
            s.terminate()
    lines = [
        SECTION,
        "",
        f"Command: `python bench/bench_rpc.py --runs {a.runs} --words {a.words}"
        + (" --pi <pi 0.73.1>" if a.pi else "") + " --write` (fresh processes for start-up;",
        "100 sequential `get_state` calls for the round trip; one reply streamed as "
        f"{a.words + 5} deltas by `bench/fake_openai.py` for throughput; measured {time.strftime('%Y-%m-%d')}).",
        "",
        "| agent | start → `hello` | start → first `get_state` | `get_state` round trip | `message_update` events/s | bytes per update |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        hello = f"{r['hello_ms']} ms" if r["hello_ms"] is not None else "(no hello)"
        lines.append(f"| {r['name']} | {hello} | {r['first_state_ms']} ms | {r['rtt_ms']} ms | {r['events_per_s']} | {r['bytes_per_update']} |")
    if ab:
        lines += ["", f"Start-up, this tree against `--baseline` ({a.runs} runs of each, interleaved, `--no-session`; "
                  f"`python -c pass` meanwhile: {floor['wall_ms']} ms wall, {floor['cpu_ms']} ms CPU):", "",
                  "| tree | start → `hello` | start → first `get_state` | CPU to that response | CPU of the process |",
                  "| --- | ---: | ---: | ---: | ---: |"]  # fmt: skip
        lines += [f"| {r['name']} | {r['hello_ms']} ms | {r['first_state_ms']} ms | {r['cpu_first_ms']} ms | {r['cpu_ms']} ms |" for r in ab]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.write:
        sys.path.insert(0, str(HERE))
        from harness import write_section

        write_section(SECTION[3:], text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
