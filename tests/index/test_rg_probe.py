"""Pass 1 of a cold search by ripgrep (index/rg_probe.py): the files it lists hold every
file the raw prefilter lets through, whatever the JSON spelling; it walks what the layout
walks; a ripgrep that fails, cannot start or is turned off leaves the decision to the
prefilter; and the scan uses it, with the same hits."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ama.errors import InvalidArguments
from ama.index import rg_probe, search_scan
from ama.index.pattern import Pattern
from ama.index.search import SearchQuery
from ama.session.layout import iter_session_files
from tests.index.helpers import Builder
from tests.index.test_pattern import ALPHABET, HEADER, LINES, _user_line

RG = shutil.which("rg")


def _files(tmp: Path, contents: list[bytes]) -> list[str]:
    tmp.mkdir(exist_ok=True)
    paths = []
    for n, data in enumerate(contents):
        p = tmp / f"f{n}.jsonl"
        p.write_bytes(data)
        paths.append(str(p))
    return paths


def _listed(p: Pattern, root: Path, paths: list[str], links: set[str] | None = None) -> set[int] | None:
    run = rg_probe.start(p, str(root))
    return None if run is None else run.listed(paths, links or ())


def _script(tmp: Path, body: str) -> str:
    exe = tmp / "fake-rg"
    exe.write_text("#!/bin/sh\n" + body + "\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return str(exe)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(LINES, max_size=5), min_size=1, max_size=8), st.text(alphabet=ALPHABET, min_size=1, max_size=6))
def test_ripgrep_lists_every_file_the_prefilter_lets_through(tmp_path_factory, files, kw) -> None:
    try:
        p = Pattern(kw)
    except InvalidArguments:
        return
    contents = [HEADER + b"".join(lines) for lines in files]
    root = tmp_path_factory.mktemp("rg")
    listed = _listed(p, root, _files(root, contents))
    if rg_probe.regexes(p) is None:
        assert listed is None
        return
    assert listed is not None
    want = {n for n, data in enumerate(contents) if p.may_match(data, len(HEADER))}
    assert want <= listed, (kw, contents)


def test_which_keywords_ripgrep_is_asked() -> None:
    assert rg_probe.regexes(Pattern("/pars(er)/i")) is None  # a regular expression
    assert rg_probe.regexes(Pattern("ünïcode")) is None  # not ASCII
    assert rg_probe.regexes(Pattern('say "hi"')) is None  # a quote: the prefilter is not used
    rx = rg_probe.regexes(Pattern("a.B(c"))
    assert rx is not None and rx[0] == "(?i:a\\x{2E}b\\x{28}c)"
    assert len(rg_probe.regexes(Pattern("parser")) or []) == 2
    assert "\\x{130}|\\x{212A}" in (rg_probe.regexes(Pattern("qi")) or [])
    assert '"toolCall"' in (rg_probe.regexes(Pattern("crash fix")) or [])


def test_punctuation_is_literal_and_case_is_ignored(tmp_path: Path) -> None:
    paths = _files(tmp_path, [HEADER + b'{"x":"A.B(C"}\n', HEADER + b'{"x":"axb(c"}\n', HEADER + b'{"x":"a.b c"}\n'])
    assert _listed(Pattern("a.b(c"), tmp_path, paths) == {0}


def test_hidden_spellings_are_listed(tmp_path: Path) -> None:
    """Each way JSON can hide a match from a plain find (the prefilter lets the file through)."""
    tool = b'{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","name":"fix"}]}}\n'
    cases = [
        ("parser", _user_line(b'"PA\\u0052SER"')),
        ("src/lexer.py", _user_line(b'"src\\/lexer.py"')),
        ("xi", _user_line('"Q\u0130Q"'.encode())),  # İ anywhere, for a keyword with i
        ("xk", _user_line('"Q\u212aQ"'.encode())),  # the Kelvin sign, for a keyword with k
        ("qkq", _user_line(b'"Q\\u212AQ"')),
        ("crash fix", _user_line(b'"crash"') + tool),  # a tool call's text joins with a space
    ]
    for n, (kw, lines) in enumerate(cases):
        p = Pattern(kw)
        paths = _files(tmp_path / str(n), [HEADER + lines, HEADER + _user_line(b'"unrelated"')])
        assert p.may_match(HEADER + lines, len(HEADER)), kw
        assert _listed(p, tmp_path / str(n), paths) == {0}, kw


def test_ripgrep_walks_what_the_layout_walks(tmp_path: Path) -> None:
    """Workspaces three levels down, odd names, a link (never followed by ripgrep, always
    handed on), dot-names, other names and deeper files (skipped by both)."""
    root = tmp_path / "sessions"
    hit = HEADER + b'{"x":"parser"}\n'
    names = ["--p--/a b.jsonl", "--p--/new\nline.jsonl", "-e.jsonl", os.fsdecode(b"--q--/\xff\xfe.jsonl"),
             "x/y/z/deep.jsonl", ".trash/--p--/gone.jsonl", ".hidden.jsonl", "--p--/notes.txt",
             "w/x/y/z/too-deep.jsonl"]  # fmt: skip
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(hit)
    elsewhere = tmp_path / "elsewhere.jsonl"
    elsewhere.write_bytes(hit)
    link = root / "--p--" / "link.jsonl"
    os.symlink(elsewhere, link)
    (root / "--p--" / "miss.jsonl").write_bytes(HEADER + b'{"x":"other"}\n')
    links: set[str] = set()
    paths = list(iter_session_files(str(root), links=links))
    assert links == {str(link)}
    assert len(paths) == 7  # five of the names, the link and the miss
    listed = _listed(Pattern("parser"), root, paths, links)
    assert listed is not None
    assert {paths[i] for i in listed} == {p for p in paths if not p.endswith("miss.jsonl")}
    assert _listed(Pattern("parser"), root, paths) == listed - {paths.index(str(link))}


def test_a_failing_or_missing_ripgrep_leaves_every_file_to_the_prefilter(tmp_path: Path, monkeypatch) -> None:
    paths = _files(tmp_path / "s", [HEADER + b'{"x":"parser"}\n', HEADER + b'{"x":"other"}\n'])
    p = Pattern("parser")
    root = tmp_path / "s"
    assert _listed(p, root, paths) == {0}
    monkeypatch.setenv("AMA_SCAN_RG", _script(tmp_path, f"printf '{paths[1]}\\0'; echo oops >&2; exit 2"))
    assert _listed(p, root, paths) is None
    monkeypatch.setenv("AMA_SCAN_RG", _script(tmp_path, "kill -9 $$"))
    assert _listed(p, root, paths) is None
    monkeypatch.setenv("AMA_SCAN_RG", _script(tmp_path, f"printf '{paths[1]}\\0/elsewhere\\0'; exit 0"))
    assert _listed(p, root, paths) == {1}  # (trusted; a path it was not given is ignored)
    monkeypatch.setenv("AMA_SCAN_RG", str(tmp_path / "no-such-rg"))
    assert rg_probe.start(p, str(root)) is None
    monkeypatch.setenv("AMA_SCAN_RG", "0")
    assert rg_probe.start(p, str(root)) is None
    monkeypatch.setenv("AMA_SCAN_RG", "")
    with monkeypatch.context() as m:  # a platform without posix_spawn
        m.delattr(os, "posix_spawn")
        assert rg_probe.start(p, str(root)) is None
    run = rg_probe.start(p, str(root))
    assert run is not None
    run.cancel()
    monkeypatch.setenv("PATH", str(tmp_path))  # no rg on PATH
    assert rg_probe.find_rg() is None and rg_probe.start(p, str(root)) is None


def _hits(root: Path, q: SearchQuery) -> list[tuple]:
    return [tuple(getattr(h, f) for f in search_scan._FIELDS) for h in search_scan.scan(str(root), q)]


def test_the_scan_asks_ripgrep_and_gives_the_same_hits(sessions_dir: Path, tmp_path: Path, monkeypatch) -> None:
    for i in range(30):
        s = Builder(sessions_dir, "/p", created=f"2026-04-{1 + i:02d}T09:00:00.000Z")
        s.user("PARSER here" if i % 7 == 0 else "nothing", f"2026-04-{1 + i:02d}T10:00:00.000Z")
    log = tmp_path / "rg.log"
    assert RG is not None, "ripgrep is a test dependency (.ci/run installs it)"
    logging_rg = _script(tmp_path, f'echo "$*" >> {log}; exec {RG} "$@"')
    monkeypatch.setenv("AMA_SCAN_RG", logging_rg)
    monkeypatch.setattr(search_scan, "SAMPLE_BYTES", 0)
    q = SearchQuery(Pattern("parser"))
    by_rg = _hits(sessions_dir, q)
    assert str(sessions_dir) in log.read_text()
    monkeypatch.setenv("AMA_SCAN_RG", "0")
    by_python = _hits(sessions_dir, q)
    assert by_rg == by_python and len(by_rg) == 5
    log.unlink()
    monkeypatch.setenv("AMA_SCAN_RG", logging_rg)
    assert _hits(sessions_dir, SearchQuery(Pattern("/(?i)parser/"))) == by_python
    assert not log.exists()  # a regular expression: every file is read anyway


def test_a_common_keyword_does_not_start_ripgrep(sessions_dir: Path, tmp_path: Path, monkeypatch) -> None:
    """The first files read here hold the keyword: ripgrep would not narrow the rest."""
    for i in range(3):
        Builder(sessions_dir, "/p", created=f"2026-04-0{i + 1}T09:00:00.000Z").user("parser", "2026-04-01T10:00:00.000Z")
    runs: list = []
    monkeypatch.setattr(rg_probe, "start", lambda *args: runs.append(args))
    assert len(_hits(sessions_dir, SearchQuery(Pattern("parser")))) == 3
    assert runs == []
    assert _hits(sessions_dir, SearchQuery(Pattern("xyzzy"))) == []
    assert len(runs) == 1


def test_with_a_workspace_the_sample_reads_its_directory_first(sessions_dir: Path, monkeypatch) -> None:
    """Other workspaces' files come first in the listing; the sample still finds the
    keyword common in this one, and ripgrep is not started."""
    for i in range(6):
        Builder(sessions_dir, "/a", created=f"2026-04-0{i + 1}T09:00:00.000Z").user("other", "2026-04-01T10:00:00.000Z")
    Builder(sessions_dir, "/z", created="2026-04-09T09:00:00.000Z").user("parser", "2026-04-09T10:00:00.000Z")
    Builder(sessions_dir, "/a", created="2026-04-08T09:00:00.000Z").user("parser", "2026-04-08T10:00:00.000Z")
    monkeypatch.setattr(search_scan, "SAMPLE_FILES", 2)
    runs: list = []
    start = rg_probe.start
    monkeypatch.setattr(rg_probe, "start", lambda *args: runs.append(args) or start(*args))
    hits = _hits(sessions_dir, SearchQuery(Pattern("parser"), project="/z"))
    assert [h[2] for h in hits] == ["/z"] and runs == []
    assert [h[2] for h in _hits(sessions_dir, SearchQuery(Pattern("parser")))] == ["/z", "/a"]
    assert len(runs) == 1  # without a workspace the first two files (of /a) are the sample


def test_an_interrupted_wait_kills_ripgrep(tmp_path: Path, monkeypatch) -> None:
    paths = _files(tmp_path / "s", [HEADER + b'{"x":"parser"}\n'])
    pidfile = tmp_path / "pid"
    monkeypatch.setenv("AMA_SCAN_RG", _script(tmp_path, f"echo $$ > {pidfile}; exec >&-; exec sleep 60"))
    waitpid = os.waitpid
    calls = []

    def interrupted_once(pid: int, flags: int):
        calls.append(pid)
        if len(calls) == 1:
            raise KeyboardInterrupt
        return waitpid(pid, flags)

    run = rg_probe.start(Pattern("parser"), str(tmp_path / "s"))
    assert run is not None
    monkeypatch.setattr(rg_probe.os, "waitpid", interrupted_once)
    with pytest.raises(KeyboardInterrupt):
        run.listed(paths)
    pid = int(pidfile.read_text())
    assert calls == [pid, pid]  # interrupted, then reaped after the kill
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
