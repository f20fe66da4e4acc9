"""Whole-process timing: run a command N times, report median / p95 wall time and peak RSS.

    python bench/harness.py -n 20 -- ama sessions list --all

Each run is a fresh process (so interpreter start-up and imports count, as a user sees
them); peak memory is the child's own ``ru_maxrss`` from ``wait4``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time


def start_server(*extra: str, port: int = 0) -> tuple[subprocess.Popen, int]:
    """Start bench/fake_openai.py on ``port`` (0: a free one) and return it with its port, once
    it listens.  A server that cannot bind stops the benchmark: nothing is timed against a
    port someone else holds."""
    p = subprocess.Popen(
        [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_openai.py"), "--port", str(port), *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert p.stdout is not None and p.stderr is not None
    line = p.stdout.readline()
    if not line.startswith("PORT "):
        p.kill()
        err = p.stderr.read().strip()
        p.wait()
        raise SystemExit(f"bench: the local server did not start: {err or line or 'no output'}")
    return p, int(line.split()[1])


def tree_env(src: str | None, home: str | os.PathLike, *, keep: tuple[str, ...] = ()) -> dict:
    """The environment to run the ama of source tree ``src`` (None: the installed one)
    with ``AMA_HOME=home``: with bytecode, as an installed package runs, and without the
    scan-tuning variables (``AMA_SCAN_WORKERS``) unless named in ``keep``."""
    drop = {"PYTHONDONTWRITEBYTECODE", "AMA_SCAN_WORKERS"} - set(keep)
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["AMA_HOME"] = os.fspath(home)
    if src:
        env["PYTHONPATH"] = src
    return env


def measure(
    argv: list[str],
    runs: int = 20,
    *,
    warmup: int = 2,
    env: dict | None = None,
    cwd: str | None = None,
    ok: tuple[int, ...] = (0,),
) -> dict:
    """Run ``argv`` ``warmup + runs`` times; wall time, CPU time (user + system of the
    process and the children it waited for, from ``wait4``) and peak RSS of the measured
    runs.  An exit code outside ``ok`` stops the benchmark (``rg`` exits 1 on no match)."""
    times, cpu, rss = [], [], []
    for i in range(warmup + runs):
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd)
        err = p.stderr.read().decode(errors="replace") if p.stderr else ""  # (to its end: then wait)
        _, status, usage = os.wait4(p.pid, 0)
        dt = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.stderr:
            p.stderr.close()
        if p.returncode not in ok:
            raise SystemExit(f"{' '.join(argv)} exited {p.returncode}: {err[-500:]}")
        if i >= warmup:
            times.append(dt * 1000)
            cpu.append((usage.ru_utime + usage.ru_stime) * 1000)
            rss.append(usage.ru_maxrss / 1024)  # KiB -> MiB on Linux
    times.sort()
    return {
        "median_ms": round(statistics.median(times), 1),
        "p95_ms": round(times[min(len(times) - 1, int(len(times) * 0.95))], 1),
        "min_ms": round(times[0], 1),
        "cpu_ms": round(statistics.median(cpu), 1),
        "peak_rss_mb": round(max(rss), 1),
        "runs": runs,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=20)
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    if not cmd:
        ap.error("give a command after --")
    r = measure(cmd, a.n)
    print(
        f"{' '.join(cmd)}\n  median {r['median_ms']} ms  p95 {r['p95_ms']} ms  CPU {r['cpu_ms']} ms"
        f"  peak {r['peak_rss_mb']} MB  ({a.n} runs)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())


def write_section(title: str, text: str, doc: str | os.PathLike | None = None) -> None:
    """Replace the ``## <title>`` section of docs/performance.md with ``text`` (which starts
    with that heading), or append it; other sections are left as they are."""
    import re
    from pathlib import Path

    path = Path(doc) if doc else Path(__file__).resolve().parent.parent / "docs" / "performance.md"
    current = path.read_text(encoding="utf-8") if path.exists() else "# Performance\n"
    pattern = re.compile(rf"^## {re.escape(title)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(current):
        current = pattern.sub(lambda _m: text.rstrip("\n") + "\n\n", current, count=1)
    else:
        current = current.rstrip("\n") + "\n\n" + text
    path.write_text(current.rstrip("\n") + "\n", encoding="utf-8")
