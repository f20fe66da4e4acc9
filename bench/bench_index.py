"""Benchmarks of the session index, `ama stats` and `ama sessions search` (whole processes).

    python bench/bench_index.py                 # print the table
    python bench/bench_index.py --write         # also update docs/performance.md

On bench/gen_sessions.py's default set (1,000 sessions, ~67 MB; generated into --dir on
first use): index build, one appended turn, `ama stats` and `ama sessions search` cold
(`--no-cache`) and indexed, `rg -i` over the same files, and the interpreter's own start.
Every command is a fresh process; medians of --runs runs after 2 warm-ups.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from bench.harness import measure  # noqa: E402

DOC = ROOT / "docs" / "performance.md"
BEGIN, END = "<!-- bench_index: begin -->", "<!-- bench_index: end -->"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", default="/tmp/ama-bench-index", help="where the sessions and the ama home live")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--write", action="store_true", help="update the section in docs/performance.md")
    a = ap.parse_args()
    base = Path(a.dir)
    sessions, home = base / "sessions", base / "home"
    if not sessions.exists():
        subprocess.run(
            [sys.executable, str(ROOT / "bench" / "gen_sessions.py"), "--out", str(sessions)], check=True
        )
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "src" / "ama")], check=True)
    env = {**os.environ, "AMA_HOME": str(home), "PYTHONPATH": str(ROOT / "src")}
    env.pop("AMA_SCAN_WORKERS", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # run as an installed package would: with bytecode
    ama = [sys.executable, "-m", "ama"]
    sd = ["--session-dir", str(sessions)]
    size = sum(p.stat().st_size for p in sessions.rglob("*.jsonl"))
    nfiles = sum(1 for _ in sessions.rglob("*.jsonl"))
    rows: list[tuple[str, dict]] = []

    def run(label: str, argv: list[str], *, any_rc: bool = False) -> None:
        r = measure(argv, a.runs, env=env, ok=(0, 1) if any_rc else (0,))
        rows.append((label, r))
        print(f"{label:<52} median {r['median_ms']:>7} ms  p95 {r['p95_ms']:>7} ms", flush=True)

    # build
    builds = []
    for _ in range(3):
        shutil.rmtree(home, ignore_errors=True)
        t0 = time.perf_counter()
        # doctor exits 1 when any other section reports a problem (no provider key here)
        done = subprocess.run([*ama, "doctor", "--reindex", *sd], env=env, stdout=subprocess.DEVNULL)
        if done.returncode not in (0, 1) or not (home / "index.db").exists():
            raise SystemExit(f"ama doctor --reindex failed (exit {done.returncode}): no index was built")
        builds.append((time.perf_counter() - t0) * 1000)
    build = {"median_ms": round(statistics.median(builds), 1), "p95_ms": round(max(builds), 1)}
    rows.append(("index build, whole set (`ama doctor --reindex`)", build))
    print(f"build median {build['median_ms']} ms", flush=True)
    db_size = sum(f.stat().st_size for f in home.glob("index.db*"))

    run("`python -c pass` (interpreter start, for reference)", [sys.executable, "-c", "pass"])
    run("`python -c 'import msgspec, sqlite3'`", [sys.executable, "-c", "import msgspec, sqlite3"])
    run("`ama --version`", [*ama, "--version"])
    run("`ama stats --all --no-cache` (cold)", [*ama, "stats", "--all", "--no-cache", *sd])
    run("`ama stats --all` (indexed)", [*ama, "stats", "--all", *sd])
    run("`ama stats --all --by model` (indexed)", [*ama, "stats", "--all", "--by", "model", *sd])
    for kw, what in (("parser", "common word"), ("xyzzy", "no match")):
        run(
            f"`ama sessions search {kw} --all --no-cache` ({what}, cold)",
            [*ama, "sessions", "search", kw, "--all", "--no-cache", *sd],
        )
        run(
            f"`ama sessions search {kw} --all` ({what}, indexed)",
            [*ama, "sessions", "search", kw, "--all", *sd],
        )
        run(f"`rg -i {kw}` over the same files", ["rg", "-i", kw, str(sessions)], any_rc=True)
    run("`ama sessions list --all --no-cache`", [*ama, "sessions", "list", "--all", "--no-cache", *sd])
    run("`ama sessions list --all` (indexed)", [*ama, "sessions", "list", "--all", *sd])

    # the same without `site` (this machine's site-packages runs a .pth hook that imports
    # certifi at every start): the interpreter's own cost, then ours on top of it
    import site

    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), *site.getsitepackages()])
    bare = [sys.executable, "-S", "-m", "ama"]
    run("without site: `python -S -c pass`", [sys.executable, "-S", "-c", "pass"])
    run("without site: `ama stats --all --no-cache`", [*bare, "stats", "--all", "--no-cache", *sd])
    run("without site: `ama stats --all` (indexed)", [*bare, "stats", "--all", *sd])
    run(
        "without site: `ama sessions search parser --all --no-cache`",
        [*bare, "sessions", "search", "parser", "--all", "--no-cache", *sd],
    )
    run(
        "without site: `ama sessions search parser --all` (indexed)",
        [*bare, "sessions", "search", "parser", "--all", *sd],
    )
    run(
        "without site: `ama sessions search xyzzy --all --no-cache`",
        [*bare, "sessions", "search", "xyzzy", "--all", "--no-cache", *sd],
    )
    run(
        "without site: `ama sessions search xyzzy --all` (indexed)",
        [*bare, "sessions", "search", "xyzzy", "--all", *sd],
    )
    env["PYTHONPATH"] = str(ROOT / "src")

    # one appended turn: re-index time in-process, and a whole `ama stats` after it
    from ama.index import db as D
    from ama.index.indexer import refresh

    os.environ["AMA_HOME"] = str(home)
    target = sorted(sessions.rglob("*.jsonl"))[0]
    turn = _turn_lines(target)
    conn = D.connect()
    refresh(conn, str(sessions))
    appends, whole = [], []
    for _ in range(10):
        with open(target, "ab") as f:
            f.write(turn)
        t0 = time.perf_counter()
        info = refresh(conn, str(sessions))
        appends.append((time.perf_counter() - t0) * 1000)
        assert info.scanned == 1
        with open(target, "ab") as f:
            f.write(turn)
        t0 = time.perf_counter()
        subprocess.run([*ama, "stats", "--all", *sd], env=env, check=True, stdout=subprocess.DEVNULL)
        whole.append((time.perf_counter() - t0) * 1000)
    conn.close()
    rows.append(("re-index after one appended turn (in-process `refresh`)", _med(appends)))
    rows.append(("`ama stats --all` right after one appended turn", _med(whole)))
    print(f"append: {_med(appends)}  whole stats after append: {_med(whole)}")

    table = _table(rows, nfiles, size, db_size)
    print(table)
    if a.write:
        _write(table)
    return 0


def _med(xs: list[float]) -> dict:
    xs = sorted(xs)
    return {"median_ms": round(statistics.median(xs), 1), "p95_ms": round(xs[int(len(xs) * 0.95) - 1], 1)}


def _turn_lines(path: Path) -> bytes:
    """One more turn (user, assistant with two tool calls, two results, reply) in the
    file's own format, parented on its last entry, with fresh ids."""
    import uuid

    lines = path.read_bytes().splitlines()
    last_id = re.search(rb'"id":"([^"]+)"', lines[-1]).group(1).decode()  # type: ignore[union-attr]
    ts = "2026-11-30T12:00:00.000Z"
    out = []
    parent = last_id
    for kind in ("user", "assistant", "toolResult", "toolResult", "final"):
        eid = uuid.uuid4().hex[:8]
        if kind == "user":
            msg = '{"role":"user","content":"one more question about the parser","timestamp":0}'
        elif kind == "assistant":
            msg = (
                '{"role":"assistant","content":[{"type":"text","text":"looking"},{"type":"toolCall","id":"c1","name":"read",'
                '"arguments":{"path":"src/a.py"}},{"type":"toolCall","id":"c2","name":"grep","arguments":{"pattern":"x"}}],'
                '"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":100,"output":20,'
                '"cacheRead":1000,"cacheWrite":0,"totalTokens":1120},"stopReason":"toolUse","timestamp":0}'
            )
        elif kind == "toolResult":
            msg = (
                '{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"'
                + "x" * 1800
                + '"}],"isError":false,"timestamp":0}'
            )
        else:
            msg = (
                '{"role":"assistant","content":[{"type":"text","text":"done"}],"api":"anthropic-messages","provider":"anthropic",'
                '"model":"claude-sonnet-4-5","usage":{"input":10,"output":5,"cacheRead":1100,"cacheWrite":0,"totalTokens":1115},'
                '"stopReason":"stop","timestamp":0}'
            )
        out.append(
            f'{{"type":"message","id":"{eid}","parentId":"{parent}","timestamp":"{ts}","message":{msg}}}'
        )
        parent = eid
    return ("\n".join(out) + "\n").encode()


def _table(rows: list[tuple[str, dict]], nfiles: int, size: int, db_size: int) -> str:
    import platform

    try:
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        load = "?"
    lines = [
        f"Produced by `python bench/bench_index.py --write` on `bench/gen_sessions.py`'s default set: {nfiles} "
        f"sessions, {size / 1e6:.1f} MB.  Machine: {platform.system()} {platform.release()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, SQLite {__import__('sqlite3').sqlite_version}, load average {load}.  "
        f"Index size: {db_size / 1e6:.1f} MB.  Whole processes, medians of fresh runs (`python -m ama`).",
        "",
        "| what | median | p95 |",
        "| --- | ---: | ---: |",
    ]
    for label, r in rows:
        lines.append(f"| {label} | {r['median_ms']:.0f} ms | {r['p95_ms']:.0f} ms |")
    return "\n".join(lines)


def _write(table: str) -> None:
    text = DOC.read_text(encoding="utf-8") if DOC.exists() else "# Performance\n"
    block = f"{BEGIN}\n{table}\n{END}"
    if BEGIN in text and END in text:
        text = text[: text.index(BEGIN)] + block + text[text.index(END) + len(END) :]
    else:
        raise SystemExit(f"{DOC} has no {BEGIN} marker: add the section first")
    DOC.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
