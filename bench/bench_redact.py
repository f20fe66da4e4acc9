"""What redaction costs: ``clean()`` per MiB of each kind of text, a whole export, and the
bash environment scrub per command.

    python3 bench/bench_redact.py                      # print the table
    python3 bench/bench_redact.py --write              # also write docs/performance.md (## Redaction)
    python3 bench/bench_redact.py --baseline OTHER/src # a second column: another tree

* text kinds, 1 MiB each, built deterministically: ``code`` (ama's own sources), ``prose``
  (docs/*.md), ``tool output`` (git log lines, UUIDs, sha256 sums, ls -l lines), ``base64``
  (random bytes, as image data inside text), and ``secrets`` (the code with one fake token
  every 2 KiB).  Each is cleaned whole, the median of 7 runs.
* ``export``: ``export_session`` of one generated session of 2,000 entries (about 4 MB,
  ``bench/gen_sessions.py --big 2000``), md and json, in-process, the median of 5 runs.
* ``bash env``: ``scrub_env(os.environ)`` as the bash tool calls it before every command
  (the median of 2,000 calls), with the variables of this process.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MIB = 1 << 20
COMMAND = "python3 bench/bench_redact.py --write"
NOTES = """\
The larger rule table (about 60 token rules instead of 9) costs less than the old one because no
regex is tried at every position of a text any more: token rules run only on runs of token
characters at least 15 long (found by one character-class scan), the generic assignments only where
`str.find` sees a keyword (`pass`, `secret`, `token`, `key`, ...) in the lowercased text, the AWS and
Azure context rules only where their word occurs, and URL credentials from the literal `://`.
Strings shorter than 8 characters are returned at once.  The bash environment scrub caches its
verdict per variable, so only the first command of a process pays for the value checks.  What is
left of a `json` export is mostly Python's pure-Python JSON encoder (`indent=2`).
"""


def fill(parts: list[str]) -> str:
    text = "\n".join(parts)
    while len(text) < MIB:
        text += "\n" + text
    return text[:MIB]


def corpora() -> dict[str, str]:
    rng = random.Random(1)
    code = fill([p.read_text() for p in sorted((ROOT / "src" / "ama").rglob("*.py"))])
    prose = fill([p.read_text() for p in sorted((ROOT / "docs").glob("*.md"))])
    lines = []
    for i in range(9000):
        h = f"{rng.getrandbits(160):040x}"
        lines += [
            f"commit {h}",
            f"{uuid.UUID(int=rng.getrandbits(128))}  request {i} ok",
            f"{rng.getrandbits(256):064x}  build/out-{i}.tar.gz",
            f"-rw-r--r-- 1 alice staff {rng.randrange(10**6):>8} Nov 30 12:{i % 60:02d} file{i}.py",
        ]
    tool = fill(lines)
    b64 = base64.b64encode(rng.randbytes(MIB)).decode()[:MIB]
    token = "ghp_" + "Ab1" * 12  # fake
    chunks = [code[i : i + 2048] for i in range(0, len(code), 2048)]
    secrets = fill([c + f"\nGITHUB_TOKEN={token}\n" for c in chunks])
    return {"code": code, "prose": prose, "tool output": tool, "base64": b64, "secrets": secrets}


def median_ms(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def measure(src: str) -> dict[str, float | None]:
    """{case: median ms} with ama imported from ``src`` (run in a fresh process per tree)."""
    sys.path.insert(0, src)
    from ama.export import export_session
    from ama.export.redact import clean, sanitize

    out: dict[str, float | None] = {}
    for kind, text in corpora().items():
        full = median_ms(lambda t=text: clean(t), 7)
        base = median_ms(lambda t=text: sanitize(t), 7)
        out[f"`clean()` of 1 MiB of {kind}"] = full
        out[f"  of which redaction (beyond `sanitize()`), {kind}"] = full - base
    with tempfile.TemporaryDirectory(prefix="ama-bench-redact-") as tmp:
        env = {**os.environ, "PYTHONPATH": src}
        gen = [
            sys.executable,
            str(ROOT / "bench" / "gen_sessions.py"),
            "--out",
            tmp,
            "--big",
            "2000",
            "--seed",
            "3",
        ]
        subprocess.run(gen, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        path = next(str(p) for p in Path(tmp).rglob("*.jsonl"))
        size = os.path.getsize(path) / MIB
        for fmt in ("md", "json"):
            out[f"`export_session` {fmt}, one session of 2,000 entries ({size:.1f} MiB)"] = median_ms(
                lambda f=fmt: export_session(path, f), 5
            )
    try:
        from ama.tools.bash_env import scrub_env
    except ImportError:
        scrub_env = None
    first = "`scrub_env(os.environ)`, the first bash command of a process"
    steady = "`scrub_env(os.environ)`, every later bash command"
    if scrub_env is None:
        out[first] = out[steady] = None
    else:
        t0 = time.perf_counter()
        scrub_env(os.environ)
        out[first] = (time.perf_counter() - t0) * 1000
        n = 2000
        t0 = time.perf_counter()
        for _ in range(n):
            scrub_env(os.environ)
        out[steady] = (time.perf_counter() - t0) / n * 1000
    return out


def cell(ms: float | None) -> str:
    if ms is None:
        return "—"
    return f"{ms:.2f} ms" if ms < 10 else f"{ms:.0f} ms"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true", help="write the table into docs/performance.md")
    ap.add_argument("--src", default=str(ROOT / "src"), help="the tree to import ama from")
    ap.add_argument(
        "--baseline", metavar="SRC", help="another tree measured the same way, as a second column"
    )
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.json:
        print(json.dumps(measure(a.src)))
        return 0

    def run(src: str) -> dict:
        p = subprocess.run(
            [sys.executable, __file__, "--json", "--src", src], capture_output=True, text=True, check=True
        )
        return json.loads(p.stdout)

    ours = run(a.src)
    base = run(a.baseline) if a.baseline else None
    head = (
        "| case | this tree | "
        + ("baseline |" if base else "")
        + "\n| --- | ---: |"
        + (" ---: |" if base else "")
    )
    rows = [f"| {k} | {cell(v)} |" + (f" {cell(base.get(k))} |" if base else "") for k, v in ours.items()]
    table = head + "\n" + "\n".join(rows)
    print(table)
    if a.write:
        sys.path.insert(0, str(ROOT / "bench"))
        from harness import write_section

        machine = f"{platform.system()} {platform.release()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        cmd = COMMAND + (f" --baseline {a.baseline}" if a.baseline else "")
        text = (
            f"## Redaction\n\nProduced by `{cmd}` (in-process, medians; {machine}; load average {load} "
            "when it finished: the machine was shared, so read the ratios more than the times).\n"
            + (
                "The baseline column is the tree before this change (the old, smaller rule set).\n"
                if base
                else ""
            )
            + "\n"
            + table
            + "\n\n"
            + NOTES
        )
        write_section("Redaction", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
