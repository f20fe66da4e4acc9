"""The byte passes a cold search can make over session files, one core, in this interpreter:
what bounds `ama sessions search --no-cache` when nothing matches (docs/performance.md).

    python bench/bench_byte_passes.py                          # the 1,000 spaced sessions
    python bench/bench_byte_passes.py --set /tmp/ama-scaling/compact-1000 --runs 9

Uses a set of `bench/bench_scaling.py`.  The files are read once into memory; each row is
the best of --runs passes over all of them (best, not median: the question is what the pass
costs, not how the machine's load moves it), except the first, which reads the files again.
"""

from __future__ import annotations

import argparse
import mmap
import re
import time
from collections.abc import Callable
from pathlib import Path

KEYWORD = b"xyzzy"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", default="/tmp/ama-scaling/spaced-1000", help="a directory of session files")
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    paths = sorted(str(p) for p in Path(a.set).rglob("*.jsonl"))
    if not paths:
        ap.error(f"no session files under {a.set!r} (run bench/bench_scaling.py once to make the sets)")
    datas = [Path(p).read_bytes() for p in paths]
    print(f"{len(paths)} files, {sum(map(len, datas)) / 2**20:.0f} MiB, keyword {KEYWORD.decode()!r}")

    def row(label: str, f: Callable[[], object]) -> None:
        best = float("inf")
        for _ in range(a.runs):
            t = time.perf_counter()
            f()
            best = min(best, time.perf_counter() - t)
        print(f"{label:44s} {best * 1000:7.1f} ms")

    def mapped() -> None:
        for p in paths:
            with open(p, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as m:
                m.find(KEYWORD)

    ignorecase = re.compile(re.escape(KEYWORD), re.I)
    classes = re.compile(b"".join(b"[%c%c]" % (c, c ^ 32) for c in KEYWORD))
    escape = re.compile(rb"\\u")
    row("read the files (open + read)", lambda: [Path(p).read_bytes() for p in paths])
    row("mmap + find (one case form)", mapped)
    row("bytes.lower + find", lambda: [d.lower().find(KEYWORD) for d in datas])
    row("find of the keyword as written", lambda: [d.find(KEYWORD) for d in datas])
    row("the check for JSON escapes (\\u)", lambda: [escape.search(d) for d in datas])
    row("re with IGNORECASE", lambda: [ignorecase.search(d) for d in datas])
    row("re with a class per character", lambda: [classes.search(d) for d in datas])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
