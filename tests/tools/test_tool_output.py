"""Pure pieces: output cleaning and cutting, the read-files set, glob translation, diffs."""

from __future__ import annotations

import os
import re

import pytest

from ama.tools import ReadFiles, display_path, resolve_path
from ama.tools._ignore import glob_to_regex
from ama.tools._output import OutputCollector, clean, clip_middle
from ama.tools.diff import MAX_DIFF_CHARS, unified_diff


def test_clean_drops_escapes_and_keeps_the_last_carriage_return_segment():
    assert clean("\x1b[1;32mok\x1b[0m \x1b]0;title\x07done") == "ok done"
    assert clean("a\r\nb\r\n") == "a\nb\n"
    assert clean("0%\r50%\r100%\nnext") == "100%\nnext"


def test_clip_middle_keeps_start_and_end_within_budgets():
    text = "".join(f"{i}\n" for i in range(1, 101))
    out = clip_middle(text, text, 100, lambda n: f"[{n} omitted]", max_chars=10_000, max_lines=10)
    assert out.split("\n") == ["1", "2", "3", "4", "[90 omitted]", "95", "96", "97", "98", "99", "100"]
    one_line = "x" * 1000
    out = clip_middle(one_line, one_line, 1, lambda n: f"[cut {n}]", max_chars=100, max_lines=10)
    assert out == "x" * 40 + "…\n[cut 0]\n…" + "x" * 59


def test_collector_small_output_is_not_saved(tmp_path):
    c = OutputCollector(spill=lambda: str(tmp_path / "never"))
    c.feed(b"hello\n")
    r = c.render()
    assert (r.text, r.truncated, r.saved_to, r.total_bytes) == ("hello\n", False, None, 6)
    assert not (tmp_path / "never").exists()


def test_collector_counts_lines_across_a_spill(tmp_path):
    path = tmp_path / "spill"
    c = OutputCollector(spill=lambda: str(path))
    chunk = b"".join(b"%07d\n" % i for i in range(100_000))  # 800 kB per feed
    for _ in range(5):
        c.feed(chunk)
    c.feed(b"tail without newline")
    r = c.render(max_chars=1000, max_lines=100)
    assert r.truncated and r.saved_to == str(path)
    assert path.read_bytes() == chunk * 5 + b"tail without newline"
    lines = r.text.split("\n")
    assert lines[0] == "0000000" and lines[-1] == "tail without newline"
    assert f"... [{500_001 - 100} lines omitted; full output ({r.total_bytes} bytes) in {path}] ..." in lines


def test_read_files_record_check_forget(tmp_path):
    p = tmp_path / "f.txt"
    p.write_text("one")
    rf = ReadFiles()
    assert rf.check(str(p)) == f"File has not been read yet: {p}. Read it first before writing to it."
    rf.record(str(p))
    assert rf.check(str(p)) is None
    link = tmp_path / "link.txt"
    link.symlink_to(p)
    assert rf.check(str(link)) is None  # keyed by real path
    p.write_text("two")
    assert "has been modified since it was read" in rf.check(str(p))
    p.unlink()
    assert rf.check(str(p)) == f"File was deleted since it was read: {p}."
    assert rf.paths() == [os.path.realpath(p)]
    rf.forget(str(p))
    assert rf.paths() == []


def test_paths(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", "/home/someone")
    assert resolve_path("/ws", "a/../b.txt") == "/ws/b.txt"
    assert resolve_path("/ws", "~/x") == "/home/someone/x"
    assert resolve_path("/ws", "/etc/hosts") == "/etc/hosts"
    assert display_path("/ws/src/a.py", "/ws") == "src/a.py"
    assert display_path("/other/a.py", "/ws") == "/other/a.py"
    assert display_path("/ws2/a.py", "/ws") == "/ws2/a.py"


@pytest.mark.parametrize(
    ("glob", "matches", "misses"),
    [
        ("*.py", ["a.py"], ["a/b.py", "a.pyc"]),
        ("**/*.py", ["a.py", "a/b/c.py"], ["a.txt"]),
        ("a/**", ["a/b", "a/b/c"], ["a", "b/a/c"]),
        ("a/**/b", ["a/b", "a/x/y/b"], ["a/xb"]),
        ("?.txt", ["a.txt"], ["ab.txt", "/.txt"]),
        ("[!a]*", ["b", "ba"], ["a", "ab"]),
        ("*.{js,ts}", ["x.js", "x.ts"], ["x.jsx"]),
        (r"\*.md", ["*.md"], ["a.md"]),
    ],
)
def test_glob_to_regex(glob, matches, misses):
    rx = re.compile(glob_to_regex(glob), re.DOTALL)
    assert all(rx.fullmatch(m) for m in matches)
    assert not any(rx.fullmatch(m) for m in misses)


def test_unified_diff_is_capped():
    old = "".join(f"line {i}\n" for i in range(20_000))
    diff = unified_diff(old, old.replace("line", "LINE"), "big.txt")
    assert len(diff) <= MAX_DIFF_CHARS + 100
    assert diff.endswith(f"... [diff cut at {MAX_DIFF_CHARS} characters]\n")
