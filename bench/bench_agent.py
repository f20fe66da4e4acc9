"""Whole-process benchmarks of the session store and the agent (issues 2 and 3).

    python bench/bench_agent.py [--runs 20] [--write]

Measures, as a user runs them (fresh process each time, compiled bytecode, median / p95 /
peak RSS): `ama --version`; `ama sessions list --all` over bench/gen_sessions.py's default
set (1,000 sessions), scanning (`--no-cache`) and indexed; loading (parse + project) a 10,000-entry ~20 MB session; `ama -p`
with one text reply and with one tool call against a local OpenAI-compatible server
(bench/fake_openai.py, on a free port it reports); resuming a 5,000-entry ~20 MB session and answering one prompt.
``--write`` replaces the "Agent and sessions" section of docs/performance.md.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from harness import measure, start_server, write_section  # noqa: E402

SECTION = "## Agent and sessions"


def cases(ama: list[str], *, catalog: Path, load: list[str], big_mb: float, resume_id: str) -> list[tuple[str, list[str], str]]:
    """(label, argv, target) of every row; each label says what its argv measures."""
    listing = [*ama, "sessions", "list", "--all", "--session-dir", str(catalog)]
    return [
        ("`python -c pass` (interpreter start: the floor under every row)", [ama[0], "-c", "pass"], "—"),
        ("`ama --version`", [*ama, "--version"], "≤ 100 ms"),
        ("`ama sessions list --all --no-cache` (1,000 sessions, 69 MB, no index: scans the files)", [*listing, "--no-cache"], "—"),
        ("`ama sessions list --all` (1,000 sessions, 69 MB, index built by the warm-up)", listing, "—"),
        (f"load + project a 10,000-entry {big_mb:.0f} MB session", load, "—"),
        ("`ama -p` one text reply (local OpenAI-compatible server)", [*ama, "-p", "hi", "--model", "local/bench", "--no-session"], "≤ 300 ms, ≤ 80 MB"),
        ("`ama -p` one tool call + reply", [*ama, "-p", "hi", "--model", "localtool/bench", "--permission-mode", "full-auto", "--no-session"], "—"),
        ("`ama -p --resume` a 5,000-entry ~20 MB session, one reply", [*ama, "-p", "hi", "--resume", resume_id, "--model", "local/bench"], "≤ 400 ms, ≤ 150 MB"),
    ]  # fmt: skip


def write_config(home: Path, port: int, tool_port: int) -> None:
    (home / "config.json").write_text(json.dumps({"providers": {
        "local": {"api": "openai-completions", "baseUrl": f"http://127.0.0.1:{port}/v1", "apiKey": "x",
                  "models": [{"id": "bench", "contextWindow": 1000000, "maxTokens": 4096}]},
        "localtool": {"api": "openai-completions", "baseUrl": f"http://127.0.0.1:{tool_port}/v1", "apiKey": "x",
                      "models": [{"id": "bench", "contextWindow": 1000000, "maxTokens": 4096}]},
    }}))  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--write", action="store_true", help="update docs/performance.md")
    ap.add_argument("--work", default=None, help="work directory (default: a temp dir)")
    a = ap.parse_args()
    compileall.compile_dir(str(ROOT / "src"), quiet=1)  # as an installed package has
    work = Path(a.work or tempfile.mkdtemp(prefix="ama-bench-"))
    home = work / "home"
    ws = work / "ws"
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "README.md").write_text("bench\n")
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["AMA_HOME"] = str(home)
    gen = [sys.executable, str(HERE / "gen_sessions.py")]
    catalog = work / "catalog"
    if not catalog.exists():
        subprocess.run([*gen, "--out", str(catalog)], check=True)
    big = work / "big"
    if not big.exists():
        subprocess.run([*gen, "--out", str(big), "--big", "10000", "--result-bytes", "4000"], check=True)
    big_file = next(big.rglob("*.jsonl"))
    sessions = home / "sessions"
    if not sessions.exists():
        out = subprocess.run(
            [*gen, "--out", str(sessions), "--big", "5000", "--result-bytes", "8800", "--cwd", str(ws)],
            check=True, capture_output=True, text=True,
        ).stdout
        Path(work / "resume-id").write_text(Path(out.strip()).stem.split("_")[-1])
    resume_id = (work / "resume-id").read_text().strip()
    servers = []
    rows = []
    try:
        local, port = start_server()
        servers.append(local)
        tool, tool_port = start_server("--tool-first")
        servers.append(tool)
        write_config(home, port, tool_port)
        ama = [sys.executable, "-m", "ama"]
        load = [sys.executable, "-c", "import sys; from ama.session.store import Session; Session.load(sys.argv[1]).context()", str(big_file)]
        table_cases = cases(ama, catalog=catalog, load=load, big_mb=big_file.stat().st_size / 1e6, resume_id=resume_id)
        for name, argv, target in table_cases:
            r = measure(argv, a.runs, env=env, cwd=str(ws))
            rows.append((name, r, target))
            print(f"{name}: median {r['median_ms']} ms, p95 {r['p95_ms']} ms, peak {r['peak_rss_mb']} MB", flush=True)
    finally:
        for s in servers:
            s.terminate()
    table = [
        SECTION,
        "",
        f"Command: `python bench/bench_agent.py --runs {a.runs} --write` — whole processes, {a.runs} runs after 2 warm-ups,",
        f"compiled bytecode, Python {platform.python_version()}, {os.cpu_count()} cores, measured {time.strftime('%Y-%m-%d')}.",
        "This machine sets `PYTHONDONTWRITEBYTECODE=1` (without bytecode every run would recompile, ~130 ms);",
        "the benchmark compiles `src/` once and clears that variable, as an installed package would run.",
        "The local server is `bench/fake_openai.py`; requests to it are real HTTP on 127.0.0.1.",
        "",
        "| case | median | p95 | peak RSS | target |",
        "| --- | ---: | ---: | ---: | --- |",
    ]
    for name, r, target in rows:
        table.append(f"| {name} | {r['median_ms']} ms | {r['p95_ms']} ms | {r['peak_rss_mb']} MB | {target} |")
    text = "\n".join(table) + "\n"
    print(text)
    if a.write:
        write_section(SECTION[3:], text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
