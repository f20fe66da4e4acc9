"""Indexed queries, whole processes: `ama stats`, `ama sessions search`, `ama sessions list`
answered from a current index, against another source tree, run by run interleaved.

    python bench/bench_indexed.py --sets /tmp/ama-scaling/spaced-1000 /tmp/ama-scaling/spaced-10000 \\
        --home /tmp/me-home --baseline OLD/src [--baseline-home /tmp/me-base-home] [--runs 15]

Each set gets its own ama home per tree (``<home>-<set name>``), built once with
``ama doctor --reindex`` when it has no index yet.  Every row is a fresh process
(`python -m ama`, bytecode allowed); the two trees and `python -c pass` (the floor under
every row) alternate run by run, so that a shared machine's load moves them alike.  A row
gives the median wall time, the median above the median floor, and the median CPU time
(user + system of the process and its children, from ``wait4``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.harness import tree_env  # noqa: E402

COMMANDS = {
    "stats": ["stats", "--all"],
    "search": ["sessions", "search", "xyzzy", "--all"],
    "list": ["sessions", "list", "--all"],
}


def _env(src: str, home: str) -> dict[str, str]:
    return tree_env(src, home, keep=("AMA_SCAN_WORKERS",))


def _run(argv: list[str], env: dict[str, str] | None) -> tuple[float, float]:
    """(wall ms, CPU ms) of one process."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, ru = os.wait4(p.pid, 0)
    wall = (time.perf_counter() - t0) * 1000
    err = p.stderr.read() if p.stderr else b""
    if p.stderr:
        p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {err.decode(errors='replace')[-400:]}")
    return wall, (ru.ru_utime + ru.ru_stime) * 1000


def _ensure_index(src: str, home: str, sessions: str) -> None:
    if os.path.exists(os.path.join(home, "index.db")):
        return
    os.makedirs(home, exist_ok=True)
    print(f"building the index of {sessions} in {home} ...", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "ama", "doctor", "--reindex", "--session-dir", sessions],
                   env=_env(src, home), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", nargs="+", required=True)
    ap.add_argument("--home", required=True, help="prefix of this tree's ama homes")
    ap.add_argument("--src", default=str(ROOT / "src"))
    ap.add_argument("--baseline", help="another tree's src directory")
    ap.add_argument("--baseline-home", help="prefix of the baseline's ama homes (default: <home>-base)")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--commands", nargs="+", default=list(COMMANDS))
    a = ap.parse_args()
    trees = [("this", a.src, a.home)]
    if a.baseline:
        trees.append(("base", a.baseline, a.baseline_home or a.home + "-base"))
    for _, src, _ in trees:
        subprocess.run([sys.executable, "-m", "compileall", "-q", src], check=True)
    floor = [sys.executable, "-c", "pass"]
    print(f"{'row':<28} {'tree':<5} {'wall':>7} {'above':>7} {'cpu':>7}   (ms, medians of {a.runs})")
    for sessions in a.sets:
        name = Path(sessions).name
        for _, src, home in trees:
            _ensure_index(src, f"{home}-{name}", sessions)
        for cmd in a.commands:
            argv = [sys.executable, "-m", "ama", *COMMANDS[cmd], "--session-dir", sessions]
            res: dict[str, list[tuple[float, float]]] = {t: [] for t, _, _ in trees}
            floors: list[float] = []
            for i in range(a.runs + 1):
                for tree, src, home in trees:
                    r = _run(argv, _env(src, f"{home}-{name}"))
                    if i:  # the first round warms the caches
                        res[tree].append(r)
                w, _ = _run(floor, None)
                if i:
                    floors.append(w)
            fl = statistics.median(floors)
            for tree, _, _ in trees:
                wall = statistics.median(x[0] for x in res[tree])
                cpu = statistics.median(x[1] for x in res[tree])
                row = f"{name} {cmd}"
                print(f"{row:<28} {tree:<5} {wall:7.1f} {wall - fl:7.1f} {cpu:7.1f}")
            print(f"{'':<28} {'floor':<5} {fl:7.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
