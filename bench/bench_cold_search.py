"""`ama sessions search --no-cache` (the scan, no index) against `rg -i`, and against another tree.

    python bench/bench_cold_search.py --dir /tmp/ama-scaling                       # this tree
    python bench/bench_cold_search.py --dir /tmp/ama-scaling --baseline OLD/src    # and another
    python bench/bench_cold_search.py ... --runs 11 --only xyzzy parser

Uses the sets of `bench/bench_scaling.py` (`spaced-1000`, `spaced-10000`).  Every row is a fresh
process (`python -m ama`); it gives the median wall time and the median CPU time of the process
and its children (user + system, from `wait4`: the scan's forked workers count) over --runs runs,
the trees interleaved run by run so that they can be compared on a shared machine.  The output
of both trees is compared once per row (same hits, same order, same stderr).  `python -c pass`
is the floor under every row; `rg -i` runs as a whole process too (it exits 1 when nothing
matches).  The project row runs from `/bench/project-5` (the generator's workspaces), which it
creates if it can.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.harness import tree_env as _env  # noqa: E402

PROJECT = "/bench/project-5"


def cases(sets: Path) -> dict[str, tuple[list[str], str | None]]:
    one, ten = str(sets / "spaced-1000"), str(sets / "spaced-10000")

    def ama(*args: str, d: str = one) -> list[str]:
        return [sys.executable, "-m", "ama", "sessions", "search", *args, "--no-cache", "--session-dir", d]

    rg = shutil.which("rg")
    out: dict[str, tuple[list[str], str | None]] = {
        "xyzzy": (ama("xyzzy", "--all"), None),
        "parser": (ama("parser", "--all"), None),
        "one hit, oldest file": (ama("class_324ebedbbd", "--all"), None),
        "/pars(er|ing)/": (ama("/pars(er|ing)/", "--all"), None),
        "/class_324ebedbb./ (one hit)": (ama("/class_324ebedbb./", "--all"), None),
        "parser --limit 200": (ama("parser", "--all", "--limit", "200"), None),
        "xyzzy, one project": (ama("xyzzy"), PROJECT),
        "parser, one project": (ama("parser"), PROJECT),
        "xyzzy, 10k": (ama("xyzzy", "--all", d=ten), None),
        "parser, 10k": (ama("parser", "--all", d=ten), None),
        "python -c pass": ([sys.executable, "-c", "pass"], None),
    }
    if rg:
        out["rg -i xyzzy"] = (["sh", "-c", f"{rg} -i xyzzy {one} >/dev/null; true"], None)
        out["rg -i parser"] = (["sh", "-c", f"{rg} -i parser {one} >/dev/null; true"], None)
        out["rg -i xyzzy, 10k"] = (["sh", "-c", f"{rg} -i xyzzy {ten} >/dev/null; true"], None)
    return out


def run(argv: list[str], env: dict, cwd: str | None) -> tuple[float, float]:
    """Wall and CPU (user + system of the process and its children) in ms."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
    _, _status, ru = os.wait4(p.pid, 0)
    return (time.perf_counter() - t0) * 1000, (ru.ru_utime + ru.ru_stime) * 1000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", default="/tmp/ama-scaling", help="where bench_scaling.py's sets are")
    ap.add_argument("--baseline", help="another tree's src/ to compare with")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--home", default="/tmp/ama-bench-cold-search-home")
    ap.add_argument("--only", nargs="*", help="rows to run (their names)")
    a = ap.parse_args()
    os.makedirs(a.home, exist_ok=True)
    try:
        os.makedirs(PROJECT, exist_ok=True)
    except OSError:
        pass
    trees = {"this": str(ROOT / "src")}
    if a.baseline:
        trees["baseline"] = a.baseline
    for src in trees.values():
        subprocess.run([sys.executable, "-m", "compileall", "-q", src], check=True)
    rows = cases(Path(a.dir))
    for name in a.only or list(rows):
        argv, cwd = rows[name]
        if cwd is not None and not os.path.isdir(cwd):
            print(f"{name}: skipped ({cwd} does not exist)")
            continue
        is_ama = argv[1:3] == ["-m", "ama"]
        names = list(trees) if is_ama else ["-"]
        if is_ama and len(trees) > 1:  # the same answer from both trees
            outs = {
                t: subprocess.run(argv[:-2] + ["--json"] + argv[-2:], env=_env(trees[t], a.home), cwd=cwd,
                                  capture_output=True).stdout  # fmt: skip
                for t in trees
            }
            if len(set(outs.values())) != 1:
                print(f"{name}: the trees give different hits")
        res: dict[str, tuple[list[float], list[float]]] = {t: ([], []) for t in names}
        for i in range(a.runs + 1):
            for t in names:
                w, c = run(argv, _env(trees.get(t), a.home), cwd)
                if i:  # the first round warms the page cache
                    res[t][0].append(w)
                    res[t][1].append(c)
        cols = "  ".join(
            f"{t}: {statistics.median(res[t][0]):5.0f} ms wall, {statistics.median(res[t][1]):5.0f} ms CPU" for t in names
        )
        print(f"{name:30} {cols}", flush=True)
    load = os.getloadavg()
    print(f"(medians of {a.runs} runs; load average {load[0]:.1f}, {load[1]:.1f}, {load[2]:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
