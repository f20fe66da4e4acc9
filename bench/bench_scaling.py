"""Scaling of the session index, `ama stats`, `ama sessions search`, opening a big session and
RPC start-up: the rows and targets of issue 20.

    python bench/bench_scaling.py                                   # this tree, every shape and size
    python bench/bench_scaling.py --baseline OLD/src                # and another tree, interleaved
    python bench/bench_scaling.py --shapes spaced --sizes 1000      # a part
    python bench/bench_scaling.py ... --write                       # update docs/performance.md
    python bench/bench_scaling.py --python VENV/bin/python          # run ama with a venv's interpreter

Generates (once, into --dir) the issue's shapes with `bench/gen_sessions.py`: 100, 1,000 and
10,000 sessions in two JSON layouts -- `spaced` (Python's `json` separators, as other programs
write) and `compact` (as ama writes) -- with a vocabulary that grows with the data
(`--vocab 1000000`), and one 50,000-entry session of about 207 MB in each layout.  Every
command is a fresh process (`python -m ama`, compiled bytecode); each row gives the median
wall time of --runs runs, the median CPU time (user + system, forked children included) and
the largest peak RSS; an index build is timed once per set from an empty ama home.  `rg -i`
over the same files is measured for the cold search's bound (at most 4x), and `python -c
pass` for the floor under every row (with --python: that interpreter's; a venv made with
`python -m venv VENV && VENV/bin/pip install -e .` starts as a user's install does, without
the `.pth` hooks of the system site-packages).  With --baseline the same rows are measured for another
source tree in the same run (interleaved per row).  The sets take about 2 GB: delete --dir
afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.harness import measure, write_section  # noqa: E402
from bench.harness import tree_env as _env  # noqa: E402

SIZES = (100, 1000, 10000)
SHAPES = ("spaced", "compact")
TITLE = "Scaling"
KEYWORD = "xyzzy"  # in no generated session
#: the interpreter of every measured process (--python)
PYTHON = sys.executable


def generate(base: Path, shapes: list[str], sizes: list[int], big: bool) -> dict[str, Path]:
    gen = [sys.executable, str(ROOT / "bench" / "gen_sessions.py")]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    sets = {}
    for shape in shapes:
        for n in sizes:
            d = base / f"{shape}-{n}"
            if not d.exists():
                subprocess.run([*gen, "--out", str(d), "--sessions", str(n), "--json", shape, "--vocab", "1000000"],
                               check=True, env=env)  # fmt: skip
            sets[f"{shape}-{n}"] = d
        if big:
            d = base / ("big" if shape == "spaced" else f"big-{shape}")
            if not d.exists():
                subprocess.run([*gen, "--out", str(d), "--big", "50000", "--result-bytes", "9000", "--json", shape],
                               check=True, env=env, stdout=subprocess.DEVNULL)  # fmt: skip
            sets[f"big-{shape}"] = d
    return sets


def build_once(src: str, sessions: Path, home: Path) -> dict:
    """One index build from an empty home: wall time, CPU time and the child's peak RSS."""
    shutil.rmtree(home, ignore_errors=True)
    t0 = time.perf_counter()
    p = subprocess.Popen([PYTHON, "-m", "ama", "doctor", "--reindex", "--session-dir", str(sessions)],
                         env=_env(src, home), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    _, status, usage = os.wait4(p.pid, 0)
    ms = (time.perf_counter() - t0) * 1000
    if os.waitstatus_to_exitcode(status) not in (0, 1) or not (home / "index.db").exists():
        raise SystemExit(f"the index build over {sessions} failed")
    return {"median_ms": round(ms, 1), "cpu_ms": round((usage.ru_utime + usage.ru_stime) * 1000, 1),
            "peak_rss_mb": round(usage.ru_maxrss / 1024, 1)}  # fmt: skip


def _rpc_config(work: Path) -> None:
    models = [{"id": "bench", "name": "bench", "reasoning": False, "input": ["text"], "contextWindow": 100000,
               "maxTokens": 4096, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}]  # fmt: skip
    providers = {"local": {"api": "openai-completions", "baseUrl": "http://127.0.0.1:9/v1", "apiKey": "x", "models": models}}
    work.mkdir(parents=True, exist_ok=True)
    (work / "config.json").write_text(json.dumps({"providers": providers}))


def _skip_line(f: Any) -> bytes:
    """Read one line, in pieces, and give its first 200 bytes: the bench must not hold a
    200 MB answer (Linux reports a child's peak RSS as at least the parent's at its start)."""
    head = f.readline(1 << 20)
    piece = head
    while piece and not piece.endswith(b"\n"):
        piece = f.readline(1 << 20)
    return head[:200]


def rpc_get_messages(src: str, work: Path, runs: int, session: Path) -> dict:
    """``ama --mode rpc --resume`` a fresh copy of ``session``, then ``get_messages``: the time
    from that request to the end of its response line (median of ``runs`` after one
    warm-up), and the peak RSS."""
    _rpc_config(work)
    times, peak = [], 0.0
    for i in range(runs + 1):
        copy = work / session.name
        shutil.copyfile(session, copy)
        argv = [PYTHON, "-m", "ama", "--mode", "rpc", "--model", "local/bench", "--resume", str(copy)]
        p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             env=_env(src, work), cwd=str(work))  # fmt: skip
        assert p.stdin is not None and p.stdout is not None
        p.stdin.write(b'{"type":"get_state","id":"s0"}\n')
        p.stdin.flush()
        p.stdout.readline()  # (session_start)
        while b'"id":"s0"' not in p.stdout.readline()[:200]:
            pass
        t0 = time.perf_counter()
        p.stdin.write(b'{"type":"get_messages","id":"m0"}\n')
        p.stdin.flush()
        head = _skip_line(p.stdout)
        while head and b'"id":"m0"' not in head:
            head = _skip_line(p.stdout)
        dt = (time.perf_counter() - t0) * 1000
        if not head.startswith(b'{"type":"response","id":"m0","command":"get_messages","success":true'):
            raise SystemExit(f"get_messages failed: {head!r}")
        p.stdin.close()
        p.stdout.close()
        _, _status, usage = os.wait4(p.pid, 0)
        if i:
            times.append(dt)
            peak = max(peak, usage.ru_maxrss / 1024)
        copy.unlink()
    return {"median_ms": round(statistics.median(times), 1), "peak_rss_mb": round(peak, 1)}


def rpc_start(src: str, work: Path, runs: int, session: Path | None = None) -> dict:
    """``ama --mode rpc`` from start until the response to a first ``get_state`` (with
    ``session``: ``--resume`` a fresh copy of it, else ``--no-session``); median wall and CPU
    of ``runs`` after one warm-up, and the peak RSS."""
    _rpc_config(work)
    times, cpu, peak = [], [], 0.0
    for i in range(runs + 1):
        argv = [PYTHON, "-m", "ama", "--mode", "rpc", "--model", "local/bench"]
        copy = None
        if session is not None:
            copy = work / session.name
            shutil.copyfile(session, copy)
            argv += ["--resume", str(copy)]
        else:
            argv.append("--no-session")
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
            raise SystemExit("ama --mode rpc exited before answering")
        dt = (time.perf_counter() - t0) * 1000
        p.stdin.close()
        p.stdout.close()
        _, _status, usage = os.wait4(p.pid, 0)
        if i:
            times.append(dt)
            cpu.append((usage.ru_utime + usage.ru_stime) * 1000)
            peak = max(peak, usage.ru_maxrss / 1024)
        if copy is not None:
            copy.unlink()
    return {"median_ms": round(statistics.median(times), 1), "cpu_ms": round(statistics.median(cpu), 1),
            "peak_rss_mb": round(peak, 1)}  # fmt: skip


def _cpu(r: dict) -> str:
    """A row's CPU time, or a dash where it was not measured (a part of a process's life)."""
    return f"{r['cpu_ms']:.0f} ms" if "cpu_ms" in r else "–"


class Table:
    """Rows of ``label -> {tree: result}``, printed as they come."""

    def __init__(self, trees: list[str]) -> None:
        self.trees = trees
        self.rows: list[tuple[str, str, dict[str, dict]]] = []  # (key, label, results)

    def add(self, key: str, label: str, results: dict[str, dict]) -> None:
        self.rows.append((key, label, results))
        cells = "  ".join(
            f"{k}: {r['median_ms']:.0f} ms (CPU {_cpu(r)}) {r['peak_rss_mb']:.0f} MiB" for k, r in results.items()
        )
        print(f"{label:<64} {cells}", flush=True)

    def get(self, key: str, tree: str) -> dict | None:
        for k, _label, res in self.rows:
            if k == key:
                return res.get(tree)
        return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", default="/tmp/ama-scaling")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated: spaced, compact")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)), help="comma-separated session counts")
    ap.add_argument("--no-big", action="store_true", help="skip the 50,000-entry session")
    ap.add_argument("--no-rpc", action="store_true", help="skip RPC start-up")
    ap.add_argument("--baseline", help="another tree's src/ directory, measured alongside")
    ap.add_argument("--python", default=sys.executable,
                    help="the interpreter that runs every measured process (default: this one), e.g. a venv's")  # fmt: skip
    ap.add_argument("--write", action="store_true", help=f"update the '{TITLE}' section of docs/performance.md")
    a = ap.parse_args()
    shapes = [s for s in a.shapes.split(",") if s]
    bad = [s for s in shapes if s not in SHAPES]
    if bad:
        ap.error(f"unknown shape {bad[0]!r} (use {', '.join(SHAPES)})")
    sizes = [int(s) for s in a.sizes.split(",") if s]
    global PYTHON
    PYTHON = a.python
    try:
        usable = subprocess.run([PYTHON, "-c", "import msgspec"], capture_output=True).returncode == 0
    except OSError as e:
        ap.error(f"--python {PYTHON}: {e.strerror}")
    if not usable:
        ap.error(f"--python {PYTHON}: it cannot run ama (no msgspec there?)")
    base = Path(a.dir)
    sets = generate(base, shapes, sizes, not a.no_big)
    trees = {"this tree": str(ROOT / "src")}
    if a.baseline:
        trees["baseline"] = os.path.abspath(a.baseline)
    for src in trees.values():
        subprocess.run([PYTHON, "-m", "compileall", "-q", src], check=True, stdout=subprocess.DEVNULL)
    t = Table(list(trees))

    def run(key: str, label: str, argv: list[str], home_of: dict[str, Path]) -> None:
        t.add(key, label, {k: measure([PYTHON, "-m", "ama", *argv], a.runs, env=_env(src, home_of[k]))
                           for k, src in trees.items()})  # fmt: skip

    floor = measure([PYTHON, "-c", "pass"], a.runs)
    t.add("floor", "`python -c pass` (the floor under every row)", dict.fromkeys(trees, floor))
    for shape in shapes:
        for n in sizes:
            sessions = sets[f"{shape}-{n}"]
            size = sum(p.stat().st_size for p in sessions.rglob("*.jsonl")) / 1e6
            homes = {k: base / f"home-{i}-{shape}-{n}" for i, k in enumerate(trees)}
            sd = ["--session-dir", str(sessions)]
            name = f"{n:,} {shape}"
            rg = measure(["rg", "-i", KEYWORD, str(sessions)], a.runs, ok=(0, 1))
            t.add(f"rg-{shape}-{n}", f"{name} ({size:.0f} MB): `rg -i {KEYWORD}`", dict.fromkeys(trees, rg))
            t.add(f"build-{shape}-{n}", f"{name}: index build (`doctor --reindex`)",
                  {k: build_once(src, sessions, homes[k]) for k, src in trees.items()})  # fmt: skip
            run(f"cstats-{shape}-{n}", f"{name}: `stats --all --no-cache`", ["stats", "--all", "--no-cache", *sd], homes)
            run(f"istats-{shape}-{n}", f"{name}: `stats --all` (indexed)", ["stats", "--all", *sd], homes)
            run(f"csearch-{shape}-{n}", f"{name}: `sessions search {KEYWORD} --all --no-cache`",
                ["sessions", "search", KEYWORD, "--all", "--no-cache", *sd], homes)  # fmt: skip
            run(f"isearch-{shape}-{n}", f"{name}: `sessions search {KEYWORD} --all` (indexed)",
                ["sessions", "search", KEYWORD, "--all", *sd], homes)  # fmt: skip
            run(f"list-{shape}-{n}", f"{name}: `sessions list --all` (indexed)", ["sessions", "list", "--all", *sd], homes)
            for h in homes.values():
                shutil.rmtree(h, ignore_errors=True)
        if not a.no_big:
            big = next(sets[f"big-{shape}"].rglob("*.jsonl"))
            homes = {k: base / f"home-{i}-big" for i, k in enumerate(trees)}
            mb = big.stat().st_size / 1e6
            name = f"50,000-entry {shape} session ({mb:.0f} MB)"
            run(f"show-{shape}", f"{name}: `sessions show`", ["sessions", "show", str(big)], homes)
            run(f"showjson-{shape}", f"{name}: `sessions show --json --context`",
                ["sessions", "show", "--json", "--context", str(big)], homes)  # fmt: skip
            t.add(f"resume-{shape}", f"{name}: RPC `--resume`, start → first `get_state`",
                  {k: rpc_start(src, base / f"rpc-{i}", a.runs, big) for i, (k, src) in enumerate(trees.items())})  # fmt: skip
            t.add(f"messages-{shape}", f"{name}: RPC `get_messages` after `--resume` (request → end of the answer)",
                  {k: rpc_get_messages(src, base / f"rpc-{i}", a.runs, big) for i, (k, src) in enumerate(trees.items())})  # fmt: skip
            for h in homes.values():
                shutil.rmtree(h, ignore_errors=True)
    if not a.no_rpc:
        t.add("rpc", "RPC start (`--no-session`) → first `get_state` response",
              {k: rpc_start(src, base / f"rpc-{i}", a.runs * 2) for i, (k, src) in enumerate(trees.items())})  # fmt: skip
    text = _table(t, a, sets)
    print(text)
    if a.write:
        write_section(TITLE, text)
    return 0


def _targets(t: Table, sets: dict[str, Path]) -> list[tuple[str, str, str]]:
    """``(target, this tree's value, met?)`` for every target of the issue that was measured."""
    me = "this tree"
    out = []

    def ms(key: str) -> float | None:
        r = t.get(key, me)
        return None if r is None else r["median_ms"]

    def check(label: str, value: str, ok: bool) -> None:
        out.append((label, value, "met" if ok else "**missed**"))

    for shape in SHAPES:
        v = ms(f"cstats-{shape}-1000")
        if v is not None:
            check(f"`stats`, 1,000 {shape}, no index ≤ 160 ms", f"{v:.0f} ms", v <= 160)
        v, rg = ms(f"csearch-{shape}-1000"), ms(f"rg-{shape}-1000")
        if v is not None and rg is not None:
            check(f"`sessions search` no match, 1,000 {shape}, no index ≤ 150 ms and ≤ 4× `rg -i`",
                  f"{v:.0f} ms = {v / rg:.1f}× rg ({rg:.0f} ms)", v <= 150 and v <= 4 * rg)  # fmt: skip
        for what in ("istats", "isearch"):
            v = ms(f"{what}-{shape}-1000")
            if v is not None:
                check(f"{'stats' if what == 'istats' else 'search'} with the index, 1,000 {shape} ≤ 50 ms",
                      f"{v:.0f} ms", v <= 50)  # fmt: skip
        for what in ("istats", "list"):
            v = ms(f"{what}-{shape}-10000")
            if v is not None:
                check(f"{'stats' if what == 'istats' else 'list'} with the index, 10,000 {shape} ≤ 80 ms",
                      f"{v:.0f} ms", v <= 80)  # fmt: skip
        b1, b10 = ms(f"build-{shape}-1000"), ms(f"build-{shape}-10000")
        if b10 is not None:
            ratio = f", {b10 / b1:.1f}× the 1,000 build" if b1 else ""
            check(f"index build, 10,000 {shape} ≤ 15 s (linear)", f"{b10 / 1000:.1f} s{ratio}", b10 <= 15000)
        big = sets.get(f"big-{shape}")
        if big is not None:
            fsize = next(big.rglob("*.jsonl")).stat().st_size / 2**20  # MiB, as the peak RSS
            for key, what in ((f"show-{shape}", "`sessions show`"), (f"resume-{shape}", "RPC resume")):
                r = t.get(key, me)
                if r is not None:
                    check(f"open the 50,000-entry {shape} session: {what} ≤ 1 s, ≤ 1.5× the file",
                          f"{r['median_ms']:.0f} ms, {r['peak_rss_mb']:.0f} MiB = {r['peak_rss_mb'] / fsize:.2f}×",
                          r["median_ms"] <= 1000 and r["peak_rss_mb"] <= 1.5 * fsize)  # fmt: skip
    v = ms("rpc")
    if v is not None:
        check("RPC start → first response ≤ 100 ms", f"{v:.0f} ms", v <= 100)
    return out


def _floor_note(a: argparse.Namespace, floor: dict) -> str:
    """What the ``python -c pass`` row says about the interpreter every row ran with."""
    took = f"`python -c pass` took {floor['median_ms']:.0f} ms here"
    if a.python != sys.executable:
        return (
            f"Every row includes starting the interpreter, here a venv's (`python -m venv <venv> && <venv>/bin/pip"
            f" install -e .`, as a user's install such as pipx makes it): {took}."
        )
    return f"Every row includes starting the interpreter: {took} (this container's `.pth` hooks import `certifi`)."


def _table(t: Table, a: argparse.Namespace, sets: dict[str, Path]) -> str:
    import platform

    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    cmd = "python bench/bench_scaling.py" + (" --baseline <tree before>/src" if a.baseline else "") + f" --runs {a.runs}"
    if a.python != sys.executable:
        cmd += " --python <venv>/bin/python"
    if a.shapes != ",".join(SHAPES):
        cmd += f" --shapes {a.shapes}"
    if a.sizes != ",".join(map(str, SIZES)):
        cmd += f" --sizes {a.sizes}"
    cmd += (" --no-big" if a.no_big else "") + (" --no-rpc" if a.no_rpc else "") + " --write"
    head = "| what | " + " | ".join(f"{k}: wall | {k}: CPU | {k}: peak RSS" for k in t.trees) + " |"
    floor = t.get("floor", t.trees[0])
    lines = [
        f"## {TITLE}",
        "",
        f"Produced by `{cmd}` on {time.strftime('%Y-%m-%d')}: medians of {a.runs} fresh processes (builds once per set),",
        "CPU = user + system time of the process and its forked children.",
        f"Machine: {platform.system()} {platform.release()}, {os.cpu_count()} CPUs, Python {platform.python_version()},"
        f" load average {load} at the end.",
        _floor_note(a, floor) if floor else "",
        "",
        head,
        "| --- |" + " ---: | ---: | ---: |" * len(t.trees),
    ]
    for _key, label, res in t.rows:
        cells = " | ".join(
            f"{res[k]['median_ms']:.0f} ms | {_cpu(res[k])} | {res[k]['peak_rss_mb']:.0f} MiB"
            for k in t.trees
        )
        lines.append(f"| {label} | {cells} |")
    targets = _targets(t, sets)
    if targets:
        lines += ["", "Targets of issue 20 (this tree):", "", "| target | measured | status |", "| --- | ---: | --- |"]
        lines += [f"| {label} | {value} | {ok} |" for label, value, ok in targets]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
