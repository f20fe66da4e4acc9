"""What checkpoints cost per turn, measured in-process the way the agent calls them.

    python3 bench/bench_checkpoints.py              # print the table
    python3 bench/bench_checkpoints.py --write      # also write it into docs/performance.md (## Checkpoints)

* ``tools`` mode: ``CheckpointTracker.checkpoint()`` with 1,000 tracked files that did not
  change since the previous checkpoint (the stat fast path: one ``lstat`` per file, no
  reads), including appending the ``ama.checkpoint`` entry to a real session file.
  Target: at most 20 ms.
* ``shadow-git`` mode over a workspace of 20,000 files (200 directories, about 120 bytes
  each): the first snapshot of a fresh process (index built from scratch, every file
  hashed), and the per-turn snapshot after 10 files changed (``ls-files`` for newly ignored
  files, ``add -A``, ``write-tree``, ``commit-tree``).  Target: at most 1.5 s.
* for information: dry-run restores in shadow-git mode, and the first snapshot of another
  session of the same workspace.

All data lives in temporary directories that are removed at the end (about 3 MB of
workspace, the session file, blobs and the shadow repository).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from ama.checkpoints import CheckpointTracker  # noqa: E402
from ama.messages import UserMessage  # noqa: E402
from ama.session.store import Session  # noqa: E402

DOC = ROOT / "docs" / "performance.md"
COMMAND = "python3 bench/bench_checkpoints.py --write"
OLD_NS = time.time_ns() - 3600 * 10**9


def stats(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def make_files(root: str, n: int, per_dir: int) -> list[str]:
    paths = []
    for i in range(n):
        d = os.path.join(root, f"pkg{i // per_dir:03d}")
        if i % per_dir == 0:
            os.makedirs(d, exist_ok=True)
        p = os.path.join(d, f"mod{i:05d}.py")
        with open(p, "w") as f:
            f.write(f"# module {i}\ndef f():\n    return {i}\n" + "x" * 80 + "\n")
        os.utime(p, ns=(OLD_NS, OLD_NS))
        paths.append(p)
    return paths


def new_turn(session: Session, tracker: CheckpointTracker, text: str) -> str:
    uid = session.append_message(UserMessage(content=text, timestamp=0)).id
    tracker.checkpoint(uid)
    return uid


def bench_tools(tmp: str, runs: int) -> dict[str, list[float]]:
    ws = os.path.join(tmp, "tools-ws")
    paths = make_files(ws, 1000, 100)
    session = Session.create(ws, os.path.join(tmp, "sessions"))
    tracker = CheckpointTracker(session=session, cwd=ws, data_dir=os.path.join(tmp, "data"))
    new_turn(session, tracker, "first")
    for p in paths:  # first touch of every file, as edit/write would do
        tracker.before_write(p)
    new_turn(session, tracker, "warm-up")
    samples = []
    for i in range(runs):
        uid = session.append_message(UserMessage(content=f"turn {i}", timestamp=0)).id
        t0 = time.perf_counter()
        cp = tracker.checkpoint(uid)
        samples.append((time.perf_counter() - t0) * 1000)
        assert cp is not None and len(cp.files) == 1000
    session.close()
    return {"tools": samples}


def bench_shadow(tmp: str, runs: int) -> dict[str, list[float]]:
    ws = os.path.join(tmp, "shadow-ws")
    paths = make_files(ws, 20_000, 100)
    data = os.path.join(tmp, "data")
    session = Session.create(ws, os.path.join(tmp, "sessions"))
    notices: list[str] = []
    tracker = CheckpointTracker(
        session=session, cwd=ws, data_dir=data, mode="shadow-git", notify=notices.append
    )
    t0 = time.perf_counter()
    first = new_turn(session, tracker, "first")
    cold = (time.perf_counter() - t0) * 1000
    if not tracker.checkpoints()[first].shadow_commit:
        raise SystemExit(f"no shadow snapshot: {notices}")
    samples, restores = [], []
    for i in range(runs):
        for p in paths[i * 10 : i * 10 + 10]:
            with open(p, "a") as f:
                f.write(f"# turn {i}\n")
        uid = session.append_message(UserMessage(content=f"turn {i}", timestamp=0)).id
        t0 = time.perf_counter()
        cp = tracker.checkpoint(uid)
        samples.append((time.perf_counter() - t0) * 1000)
        if cp is None or not cp.shadow_commit:
            raise SystemExit(f"snapshot {i} failed: {notices}")
    for _ in range(max(3, runs // 3)):
        t0 = time.perf_counter()
        res = tracker.restore(uid, dry_run=True)
        restores.append((time.perf_counter() - t0) * 1000)
        assert res.changed == 0
    # a dry run against the first checkpoint: every changed file differs
    t0 = time.perf_counter()
    res = tracker.restore(first, dry_run=True)
    wide = (time.perf_counter() - t0) * 1000
    session.close()
    # another session of the same workspace (as a new process would): its own index,
    # seeded from the last one written, so nothing is hashed again
    other = Session.create(ws, os.path.join(tmp, "sessions"))
    second = CheckpointTracker(session=other, cwd=ws, data_dir=data, mode="shadow-git", notify=notices.append)
    t0 = time.perf_counter()
    new_turn(other, second, "first of another session")
    seeded = (time.perf_counter() - t0) * 1000
    other.close()
    if notices:
        raise SystemExit(f"unexpected notices: {notices}")
    return {
        "shadow": samples,
        "cold": [cold],
        "seeded": [seeded],
        "restore_none": restores,
        "restore_wide": [wide],
        "wide_n": [res.changed],
    }


def machine() -> str:
    git = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (
        f"{platform.system()} {platform.release()}, {os.cpu_count()} CPUs, {git}, "
        f"Python {platform.python_version()}, load average {load}"
    )


def render(r: dict[str, list[float]], runs: int, shadow_runs: int) -> str:
    tools_med, tools_p95 = stats(r["tools"])
    sh_med, sh_p95 = stats(r["shadow"])
    rn_med, rn_p95 = stats(r["restore_none"])
    verdict = lambda v, limit: "meets" if v <= limit else "MISSES"  # noqa: E731
    lines = [
        "## Checkpoints",
        "",
        f"Produced by `{COMMAND}` (in-process, the way the agent calls the tracker; "
        f"{runs} checkpoints in `tools` mode, {shadow_runs} in `shadow-git` mode).  Machine: {machine()}.",
        "",
        "| what | median | p95 | target |",
        "| --- | ---: | ---: | --- |",
        f"| `checkpoint()`, 1,000 tracked files, none changed (`tools`) | {tools_med:.1f} ms | {tools_p95:.1f} ms "
        f"| ≤ 20 ms: {verdict(tools_med, 20)} |",
        f"| `checkpoint()`, shadow-git snapshot of 20,000 files, 10 changed | {sh_med:.0f} ms | {sh_p95:.0f} ms "
        f"| ≤ 1.5 s: {verdict(sh_med, 1500)} |",
        f"| first shadow-git snapshot of those 20,000 files (fresh repository) | {r['cold'][0]:.0f} ms | | "
        "once per workspace |",
        f"| first snapshot of another session of the same workspace | {r['seeded'][0]:.0f} ms | | |",
        f"| dry-run restore, shadow-git, nothing changed | {rn_med:.0f} ms | {rn_p95:.0f} ms | |",
        f"| dry-run restore, shadow-git, {int(r['wide_n'][0])} files differ | {r['restore_wide'][0]:.0f} ms | | |",
        "",
        "In `tools` mode an unchanged file costs one `lstat` and a comparison of size, mode and mtime "
        "with its previous record, which is reused as it is (no read, no hash): about 3 µs per file, "
        "most of the total; encoding the `ama.checkpoint` entry (about 150 bytes per file) and "
        "appending it to the session file takes about 0.3 ms. A shadow-git turn is four git processes (`ls-files` for files that became ignored, "
        "`add -A`, `write-tree`, `commit-tree`); `add -A` dominates with one `lstat` per file against "
        "the index and the untracked cache. The first snapshot of a workspace counts its files "
        "(the 20,000 guard), then hashes and stores every file once; a later session starts "
        "from a copy of the last index written, so it does not.",
        "",
    ]
    return "\n".join(lines)


def write_section(section: str) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from harness import write_section as write

    write("Checkpoints", section, DOC)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", "--runs", type=int, default=50, help="tools-mode checkpoints to time (default 50)")
    ap.add_argument("--shadow-runs", type=int, default=10, help="shadow-git snapshots to time (default 10)")
    ap.add_argument("--write", action="store_true", help="write the section into docs/performance.md")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="ama-bench-checkpoints-")
    try:
        results = bench_tools(tmp, args.runs)
        results.update(bench_shadow(tmp, args.shadow_runs))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    section = render(results, args.runs, args.shadow_runs)
    print(section)
    if args.write:
        write_section(section)
        print(f"written to {DOC}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
