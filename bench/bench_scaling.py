"""Scaling of the session index, `ama stats`, `ama sessions search` and opening a big session.

    python bench/bench_scaling.py --dir /tmp/ama-scaling                      # this tree
    python bench/bench_scaling.py --dir /tmp/ama-scaling --baseline OLD/src   # and another tree
    python bench/bench_scaling.py ... --write                                # update docs/performance.md

Generates (once, into --dir) the issue's shapes with `bench/gen_sessions.py`: 100, 1,000 and
10,000 sessions written with Python's JSON spacing and a vocabulary that grows with the data
(`--json spaced --vocab 1000000`), and one 50,000-entry session of about 207 MB.  Every command
is a fresh process (`python -m ama`); each row gives the median wall time of --runs runs and
the largest peak RSS; an index build is timed once per size from an empty ama home.  With
--baseline the same rows are measured for another source tree in the same run (interleaved
per row), so that the two can be compared on a shared machine.  Delete --dir afterwards: the
sets take about 1 GB.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.harness import measure, write_section  # noqa: E402

SIZES = (100, 1000, 10000)
TITLE = "Scaling"


def generate(base: Path) -> dict[str, Path]:
    gen = [sys.executable, str(ROOT / "bench" / "gen_sessions.py")]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    sets = {}
    for n in SIZES:
        d = base / f"spaced-{n}"
        if not d.exists():
            subprocess.run([*gen, "--out", str(d), "--sessions", str(n), "--json", "spaced", "--vocab", "1000000"],
                           check=True, env=env)  # fmt: skip
        sets[str(n)] = d
    big = base / "big"
    if not big.exists():
        subprocess.run([*gen, "--out", str(big), "--big", "50000", "--result-bytes", "9000", "--json", "spaced"],
                       check=True, env=env, stdout=subprocess.DEVNULL)  # fmt: skip
    sets["big"] = big
    return sets


def build_once(src: str, sessions: Path, home: Path) -> dict:
    """One index build from an empty home: wall time and the child's peak RSS."""
    shutil.rmtree(home, ignore_errors=True)
    env = _env(src, home)
    t0 = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-m", "ama", "doctor", "--reindex", "--session-dir", str(sessions)], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    _, status, usage = os.wait4(p.pid, 0)
    ms = (time.perf_counter() - t0) * 1000
    if os.waitstatus_to_exitcode(status) not in (0, 1) or not (home / "index.db").exists():
        raise SystemExit(f"the index build over {sessions} failed")
    return {"median_ms": round(ms, 1), "peak_rss_mb": round(usage.ru_maxrss / 1024, 1)}


def rpc_resume(src: str, session: Path, work: Path, runs: int) -> dict:
    """``ama --mode rpc --resume <copy of the session>``: start until the response to a first
    ``get_state`` (the session loaded, the agent composed), median of ``runs``; peak RSS."""
    import json
    import statistics

    work.mkdir(parents=True, exist_ok=True)
    models = [{"id": "bench", "name": "bench", "reasoning": False, "input": ["text"], "contextWindow": 100000,
               "maxTokens": 4096, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}]  # fmt: skip
    providers = {
        "local": {
            "api": "openai-completions",
            "baseUrl": "http://127.0.0.1:9/v1",
            "apiKey": "x",
            "models": models,
        }
    }
    (work / "config.json").write_text(json.dumps({"providers": providers}))
    times, peak = [], 0.0
    for _ in range(runs):
        copy = work / session.name
        shutil.copyfile(session, copy)
        argv = [sys.executable, "-m", "ama", "--mode", "rpc", "--model", "local/bench", "--resume", str(copy)]
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             env=_env(src, work), cwd=str(work))  # fmt: skip
        assert p.stdin is not None and p.stdout is not None
        p.stdin.write(b'{"type":"get_state","id":"s0"}\n')
        p.stdin.flush()
        for line in p.stdout:
            m = json.loads(line)
            if m.get("type") == "response" and m.get("id") == "s0":
                if not m.get("success", True):
                    raise SystemExit(f"get_state failed: {m}")
                break
        else:
            raise SystemExit("ama --mode rpc --resume exited before answering")
        times.append((time.perf_counter() - t0) * 1000)
        p.stdin.close()
        _, _status, usage = os.wait4(p.pid, 0)
        peak = max(peak, usage.ru_maxrss / 1024)
        copy.unlink()
    return {"median_ms": round(statistics.median(times), 1), "peak_rss_mb": round(peak, 1)}


def _env(src: str, home: Path) -> dict:
    env = {**os.environ, "AMA_HOME": str(home), "PYTHONPATH": src}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # run as an installed package would: with bytecode
    env.pop("AMA_SCAN_WORKERS", None)
    return env


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", default="/tmp/ama-scaling")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--baseline", help="another tree's src/ directory, measured alongside")
    ap.add_argument(
        "--write", action="store_true", help=f"update the '{TITLE}' section of docs/performance.md"
    )
    a = ap.parse_args()
    base = Path(a.dir)
    sets = generate(base)
    trees = {"this tree": str(ROOT / "src")}
    if a.baseline:
        trees["baseline"] = os.path.abspath(a.baseline)
    for src in trees.values():
        subprocess.run([sys.executable, "-m", "compileall", "-q", src], check=True, stdout=subprocess.DEVNULL)
    rows: list[tuple[str, dict[str, dict]]] = []

    def row(label: str, results: dict[str, dict]) -> None:
        rows.append((label, results))
        cells = "  ".join(
            f"{k}: {r['median_ms']:.0f} ms {r['peak_rss_mb']:.0f} MiB" for k, r in results.items()
        )
        print(f"{label:<58} {cells}", flush=True)

    def run(label: str, argv: list[str], home_of: dict[str, Path]) -> None:
        row(label, {k: measure([sys.executable, "-m", "ama", *argv], a.runs, env=_env(src, home_of[k]))
                    for k, src in trees.items()})  # fmt: skip

    row("`python -c pass`", {k: measure([sys.executable, "-c", "pass"], a.runs) for k in trees})
    for n in SIZES:
        sessions = sets[str(n)]
        size = sum(p.stat().st_size for p in sessions.rglob("*.jsonl")) / 1e6
        homes = {k: base / f"home-{i}-{n}" for i, k in enumerate(trees)}
        sd = ["--session-dir", str(sessions)]
        row(
            f"{n:,} sessions ({size:.0f} MB): index build",
            {k: build_once(src, sessions, homes[k]) for k, src in trees.items()},
        )
        run(f"{n:,} sessions: `stats --all --no-cache`", ["stats", "--all", "--no-cache", *sd], homes)
        run(f"{n:,} sessions: `stats --all` (indexed)", ["stats", "--all", *sd], homes)
        run(
            f"{n:,} sessions: `sessions search xyzzy --all --no-cache`",
            ["sessions", "search", "xyzzy", "--all", "--no-cache", *sd],
            homes,
        )
        run(
            f"{n:,} sessions: `sessions search xyzzy --all` (indexed)",
            ["sessions", "search", "xyzzy", "--all", *sd],
            homes,
        )
        run(f"{n:,} sessions: `sessions list --all` (indexed)", ["sessions", "list", "--all", *sd], homes)
        for h in homes.values():
            shutil.rmtree(h, ignore_errors=True)
    big = next(sets["big"].rglob("*.jsonl"))
    homes = {k: base / f"home-{i}-big" for i, k in enumerate(trees)}
    mb = big.stat().st_size / 1e6
    run(f"50,000-entry session ({mb:.0f} MB): `sessions show`", ["sessions", "show", str(big)], homes)
    run(
        f"50,000-entry session ({mb:.0f} MB): `sessions show --json --context`",
        ["sessions", "show", "--json", "--context", str(big)],
        homes,
    )
    row(f"50,000-entry session ({mb:.0f} MB): RPC `--resume`, start → first `get_state`", {
        k: rpc_resume(src, big, base / f"rpc-{i}", a.runs) for i, (k, src) in enumerate(trees.items())
    })  # fmt: skip
    text = _table(rows, list(trees), a)
    print(text)
    if a.write:
        write_section(TITLE, text)
    return 0


def _table(rows: list[tuple[str, dict[str, dict]]], trees: list[str], a: argparse.Namespace) -> str:
    import platform

    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    cmd = (
        "python bench/bench_scaling.py"
        + (" --baseline <tree before>/src" if a.baseline else "")
        + f" --runs {a.runs} --write"
    )
    head = "| what | " + " | ".join(f"{t}: time | {t}: peak RSS" for t in trees) + " |"
    lines = [
        f"## {TITLE}",
        "",
        f"Produced by `{cmd}` on {time.strftime('%Y-%m-%d')} (medians of fresh processes; builds once per size).",
        f"Machine: {platform.system()} {platform.release()}, {os.cpu_count()} CPUs, Python {platform.python_version()},"
        f" load average {load} at the end (shared: compare the columns of one row).",
        "",
        head,
        "| --- |" + " ---: | ---: |" * len(trees),
    ]
    for label, res in rows:
        cells = " | ".join(f"{res[t]['median_ms']:.0f} ms | {res[t]['peak_rss_mb']:.0f} MiB" for t in trees)
        lines.append(f"| {label} | {cells} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
