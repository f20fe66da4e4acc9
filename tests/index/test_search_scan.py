"""The scan of ``ama sessions search`` (index/search_scan.py) gives the index's answer: on
hidden spellings (escapes, ``\\/``, İ, the Kelvin sign, non-ASCII text), damaged lines,
files it cannot read, and however its passes are split over processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from ama.index import search_scan as SS
from ama.index.pattern import Pattern
from ama.index.search import SearchQuery
from tests.index.helpers import Builder, ama, restyle

#: how the scan may be split: in this process only; forced workers with no sequential part
#: (pass 1 by ripgrep for every file), and the same without ripgrep; one file read here then
#: the rest by ripgrep and in workers; the defaults
SPLITS = [
    {"AMA_SCAN_WORKERS": "1"},
    {"AMA_SCAN_WORKERS": "3", "AMA_SCAN_SEQUENTIAL_BYTES": "0"},
    {"AMA_SCAN_WORKERS": "3", "AMA_SCAN_SEQUENTIAL_BYTES": "0", "AMA_SCAN_RG": "0"},
    {"AMA_SCAN_WORKERS": "2", "AMA_SCAN_SEQUENTIAL_BYTES": "1"},
    {},
]

PATTERNS = [
    "parser",
    "PARSER",
    "src/lexer.py",
    "qi",
    "qkq",
    "ünïcode",
    "crash fix",
    "read {",
    "zzz-no-such-thing",
    "needle",
    "/pars(er|ing)/i",
    "/^Fix/",
    "e",
]


def _rewrite(path: str, old: bytes, new: bytes) -> None:
    data = Path(path).read_bytes()
    assert old in data
    Path(path).write_bytes(data.replace(old, new))


@pytest.fixture
def tricky(sessions_dir: Path, tmp_path: Path) -> dict:
    a, b = tmp_path / "a", tmp_path / 'b "quoted"'
    a.mkdir()
    b.mkdir()
    s1 = Builder(sessions_dir, str(a), created="2026-03-01T09:00:00.000Z")
    s1.user("Fix the PARSER crash fix now", "2026-03-01T10:00:00.000Z")
    s1.assistant(
        "2026-03-01T10:00:05.000Z", "look at src/lexer.py", stop="toolUse", tools=[("read", {"path": "src/x.py"})]
    )
    s1.result("2026-03-01T10:00:06.000Z", "Q\u0130Q and Q\u212aQ and Ünïcode")
    s1.raw(b"\xff\xfe\x00 damaged parser line \\u0070arser\n")
    s1.raw(b'{"type": "message", "id": "zz", "message": {"role": "user", "content": "parser"\n')
    s1.user("needle after the damage", "2026-03-01T10:00:07.000Z")
    # the same words, hidden by JSON escapes
    _rewrite(s1.path, b"PARSER crash", b"PA\\u0052SER crash")
    _rewrite(s1.path, b"src/lexer.py", b"src\\/lexer.py")
    _rewrite(s1.path, b'"read"', b'"re\\u0061d"')
    s2 = Builder(sessions_dir, str(b), created="2026-03-02T09:00:00.000Z")
    s2.user("Q\u0130Q once more, and a parser", "2026-03-02T10:00:00.000Z")
    s2.assistant("2026-03-02T10:00:05.000Z", "Q\u212aQ here")
    _rewrite(s2.path, "Q\u212aQ here".encode(), b"Q\\u212AQ here")
    # blank lines before the header; a header without its newline (no entries yet)
    s3 = Builder(sessions_dir, str(a), created="2026-03-03T09:00:00.000Z")
    s3.user("parser needle", "2026-03-03T10:00:00.000Z")
    Path(s3.path).write_bytes(b"\n  \n" + Path(s3.path).read_bytes())
    _rewrite(s3.path, json.dumps(str(a)).encode(), json.dumps(str(a)).replace("/", "\\/").encode())
    s4 = Builder(sessions_dir, str(a), created="2026-03-04T09:00:00.000Z")
    Path(s4.path).write_bytes(Path(s4.path).read_bytes().rstrip(b"\n"))
    return {"a": str(a), "b": str(b), "s1": s1, "s2": s2, "s3": s3}


def _unreadables(sessions_dir: Path) -> None:
    """Names the scan lists and cannot read: a directory, a dangling link, a FIFO."""
    other = sessions_dir / "--x--"
    other.mkdir()
    (other / "dir.jsonl").mkdir()
    os.symlink(other / "missing", other / "dangling.jsonl")
    os.mkfifo(other / "fifo.jsonl")


def _both(*args: str, env: dict | None = None, cwd: str | None = None) -> tuple[str, str]:
    indexed = ama("sessions", "search", *args, "--json", cwd=cwd)
    scanned = ama("sessions", "search", *args, "--json", "--no-cache", cwd=cwd, env=env)
    assert scanned.stdout == indexed.stdout, (args, env)
    assert scanned.stderr == indexed.stderr, (args, env)
    return indexed.stdout, indexed.stderr


DRIVER = """
import contextlib, io, json, os, sys
from ama.cli.main import main
out = []
for cwd, argv in json.load(sys.stdin):
    os.chdir(cwd)
    o, e = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(o), contextlib.redirect_stderr(e):
        code = main(argv)
    out.append([o.getvalue(), e.getvalue(), code])
print(json.dumps(out))
"""


def _many(runs: list[tuple[str, list[str]]], env: dict | None = None) -> list:
    """``ama`` with each ``(cwd, argv)``, in one fresh process (``env`` added to ours)."""
    p = subprocess.run(
        [sys.executable, "-c", DRIVER],
        input=json.dumps(runs),
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
    )
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    return json.loads(p.stdout.splitlines()[-1])


def _agree(runs: list[tuple[str, list[str]]]) -> list:
    """Each search gives the same output from the index and from the scan, however split."""
    want = _many([(cwd, ["sessions", "search", *argv, "--json"]) for cwd, argv in runs])
    for env in SPLITS:
        got = _many([(cwd, ["sessions", "search", *argv, "--json", "--no-cache"]) for cwd, argv in runs], env)
        for run, w, g in zip(runs, want, got, strict=True):
            assert g == w, (run, env)
    return want


def test_hidden_spellings_are_found(tricky: dict) -> None:
    s1, s2 = tricky["s1"].sid[:8], tricky["s2"].sid[:8]

    def refs(kw: str) -> list[str]:
        return [json.loads(line)["ref"] for line in _both(kw, "--all")[0].splitlines()]

    assert f"{s1}#1" in refs("parser")  # PA\u0052SER
    assert refs("src/lexer.py") == [f"{s1}@2"]  # src\/lexer.py
    assert refs("read {") == [f"{s1}@2"]  # the tool's name re\u0061d
    assert refs("qi") == [f"{s2}#1", f"{s1}@3"]  # İ
    assert refs("qkq") == [f"{s2}@2", f"{s1}@3"]  # K, raw and escaped
    assert refs("ünïcode") == [f"{s1}@3"]
    assert refs("needle") == [tricky["s3"].sid[:8] + "#1", f"{s1}#2"]


@pytest.mark.parametrize("style", ["compact", "spaced", "shuffled"])
def test_index_and_scan_agree_however_split(tricky: dict, sessions_dir: Path, style: str) -> None:
    if style != "compact":
        restyle(sessions_dir, style)
    _unreadables(sessions_dir)
    here = os.getcwd()
    runs = [(here, [p, "--all", *extra]) for p in PATTERNS for extra in ([], ["--limit", "1"])]
    runs += [(here, [p, "--all", "--role", "tool"]) for p in ("parser", "qkq", "/e/")]
    runs += [(tricky["a"], ["parser"]), (tricky["a"], ["needle"])]  # a workspace spelled with \\/ once
    runs += [(tricky["b"], ["qi"]), (tricky["b"], ["zzz"])]  # one JSON spells with \\"
    found = _agree(runs)
    assert all(code == 0 for _o, _e, code in found)
    assert sum(1 for o, _e, _c in found if o) >= len(runs) // 2  # (mostly searches with hits)


def test_many_files_limits_and_the_more_hint(sessions_dir: Path, tmp_path: Path) -> None:
    """Enough files for every pass to be split; each limit gives a prefix of one order."""
    for i in range(60):
        day = f"2026-04-{1 + i % 28:02d}"
        s = Builder(sessions_dir, str(tmp_path / f"p{i % 3}"), created=f"{day}T09:00:00.000Z")
        s.user(f"common word {i}" + (" rare" if i % 17 == 0 else ""), f"{day}T10:{i:02d}:00.000Z")
        s.result(f"{day}T10:{i:02d}:01.000Z", "common result " * (i % 5))
    here = os.getcwd()
    limits = (1, 7, 59, 500)
    found = _agree(
        [(here, ["common", "--all", "--limit", str(n)]) for n in limits]
        + [(here, ["rare", "--all"]), (here, ["xyzzy", "--all"])]
    )
    full = found[limits.index(500)][0].splitlines()
    assert len(full) == 60 + sum(1 for i in range(60) if i % 5)
    for n, (out, err, _code) in zip(limits, found, strict=False):
        assert out.splitlines() == full[:n]
        assert ("more hits" in err) is (n < len(full))
    assert len(found[-2][0].splitlines()) == 4
    assert found[-1][0] == "" and "No matches" in found[-1][1]


def test_a_search_that_finds_nothing_loads_no_decoder_and_no_sqlite(sessions_dir: Path) -> None:
    s = Builder(sessions_dir, "/p")
    s.user("parser here", "2026-03-01T10:00:00.000Z")
    code = (
        "import sys\n"
        "from ama.cli.main import main\n"
        "main(['sessions', 'search', sys.argv[1], '--all', '--no-cache'])\n"
        "print(sorted(m for m in ('msgspec', 'ama.index.extract', 'ama.session.reader', 'sqlite3') if m in sys.modules))\n"
    )
    for kw, loaded in (("xyzzy", "[]"), ("parser", "['ama.index.extract', 'ama.session.reader', 'msgspec']")):
        p = subprocess.run([sys.executable, "-c", code, kw], capture_output=True, text=True, timeout=60, env=os.environ)
        assert p.stdout.splitlines()[-1] == loaded, p.stderr


def test_a_fifo_or_a_directory_is_not_read(tmp_path: Path) -> None:
    """Found by name between the listing and the read, they are skipped without waiting."""
    fifo, d = tmp_path / "f.jsonl", tmp_path / "d.jsonl"
    os.mkfifo(fifo)
    d.mkdir()
    probe = SS._Probe(SearchQuery(Pattern("x")), keyed=False, raw_first=False)
    done: list = []
    t = threading.Thread(target=lambda: done.append((probe.file(str(fifo)), SS._read(str(fifo)), probe.file(str(d)))))
    t.start()
    t.join(10)
    if t.is_alive():  # unblock it before failing
        with open(fifo, "wb"):
            pass
    assert done == [((False, None), None, (False, None))]


@pytest.mark.parametrize("kw", ["parser", "qi", "ünïcode", "crash fix"])
def test_a_big_file_is_probed_in_overlapping_chunks(tmp_path: Path, kw: str) -> None:
    """Wherever the match falls (across a chunk's end too), chunks give the whole file's answer."""
    header = b'{"type":"session","version":3,"id":"s","timestamp":"2026-03-01T10:00:00.000Z","cwd":"/p"}\n'
    filler = b'{"type":"message","id":"%d","message":{"role":"user","content":"fill text %d"}}\n'
    hidden = {"parser": b"PA\\u0052SER", "qi": "Q\u0130Q".encode(), "ünïcode": b"\\u00dcn\\u00efcode", "crash fix": b"crash fix"}
    q = SearchQuery(Pattern(kw))
    small = SS._Probe(q, keyed=False, raw_first=False, big=1000, chunk=700)
    whole = SS._Probe(q, keyed=False, raw_first=False)
    path = tmp_path / "big.jsonl"
    lines = header + b"".join(filler % (i, i) for i in range(40))
    assert len(lines) > 2500
    for at in range(len(header), 2500):  # every place, across each chunk's end too
        word = hidden[kw] if at % 2 else kw.encode()
        data = lines[:at] + word + lines[at:]
        path.write_bytes(data)
        assert small.file(str(path)) == whole.file(str(path)) == (True, None), at
    path.write_bytes(lines)
    assert small.file(str(path)) == whole.file(str(path)) == (False, None)


def test_a_workspace_is_told_from_a_files_first_bytes(tmp_path: Path, monkeypatch) -> None:
    """With a workspace, a file's first bytes rule it out when they hold its whole header:
    the same answers as reading every file whole, wherever the header ends."""
    body = b'{"type":"message","id":"m","message":{"role":"user","content":"parser"}}\n' * 3
    heads = {
        "here": b'{"type":"session","version":3,"id":"s","cwd":"/p","timestamp":"2026-03-01T10:00:00.000Z"}\n',
        "there": b'{"type":"session","version":3,"id":"s","cwd":"/q","timestamp":"2026-03-01T10:00:00.000Z"}\n',
        "escaped": b'{"type":"session","version":3,"id":"s","cwd":"\\/p","timestamp":"2026-03-01T10:00:00.000Z"}\n',
        "blank first": b"\n" * 200 + b'{"type":"session","version":3,"id":"s","cwd":"/p"}\n',
        "long there": b'{"type":"session","version":3,"id":"s","cwd":"/q","pad":"' + b"x" * 300 + b'"}\n',
        "no header end": b'{"type":"session","version":3,"id":"s","cwd":"/p"',
    }
    q = SearchQuery(Pattern("parser"), project="/p")
    got: dict[str, list] = {}
    whole: list[int] = []
    read_whole = SS.fanout.read_whole

    def counted(fd: int, size: int) -> bytes:
        whole.append(size)
        return read_whole(fd, size)

    monkeypatch.setattr(SS.fanout, "read_whole", counted)
    for scope_bytes in (128, 1 << 20):
        monkeypatch.setattr(SS, "SCOPE_BYTES", scope_bytes)
        probe = SS._Probe(q, keyed=False, raw_first=False)
        whole.clear()
        for name, head in heads.items():
            path = tmp_path / f"{name}.jsonl"
            path.write_bytes(head + (body if name != "no header end" else b""))
            got.setdefault(name, []).append(probe.file(str(path)))
        assert len(whole) == (5 if scope_bytes == 128 else 6)  # "there" is not read whole
    assert all(a == b for a, b in got.values()), got
    assert [name for name, (a, _b) in got.items() if a[0]] == ["here", "escaped", "blank first"]
