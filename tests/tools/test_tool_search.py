"""ls, find and grep: output, limits, errors; ripgrep and the Python fallback agree on one tree."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ama.tools._walk import Cancel, list_files
from ama.tools.find import make_find_tool
from ama.tools.grep import make_grep_tool
from ama.tools.ls import MAX_ENTRIES, make_ls_tool
from tests.tools.helpers import call, fails, text, write

pytestmark = pytest.mark.anyio

# A repository (the workspace) with a project inside: ignore files of every kind and depth,
# a nested repository, hidden files, a binary, symlinks, non-UTF-8 text, CRLF, mixed case.
TREE = {
    ".gitignore": "*.tmp\n",
    ".git/info/exclude": "excluded.txt\n",
    "top.txt": "hello top\n",
    "proj/.gitignore": "build/\nnode_modules\n*.log\n!keep.log\n/docs/*.md\n*.rg\n",
    "proj/.ignore": "dotignored.txt\n",
    "proj/.rgignore": "!keep.rg\n",
    "proj/src/a.py": "x = 1\nhello there\ny\nz\nhello again\n",
    "proj/src/sub/b.py": "def hello():\n    return 'HELLO'\n",
    "proj/src/sub/.gitignore": "gen_*.py\n",
    "proj/src/sub/gen_x.py": "hello generated\n",
    "proj/src/sub/z.tmp": "hello tmp\n",
    "proj/src/c.txt": "nothing here\n",
    "proj/src/docs.md": "# hello docs\n",
    "proj/src/docs/q.md": "hello q\n",
    "proj/build/o.py": "hello build\n",
    "proj/node_modules/x/i.js": "hello js\n",
    "proj/.hidden/h.py": "hello hidden\n",
    "proj/.env": "SECRET=hello\n",
    "proj/x.log": "hello log\n",
    "proj/keep.log": "hello keep\n",
    "proj/keep.rg": "hello rg\n",
    "proj/drop.rg": "hello rg\n",
    "proj/docs/r.md": "hello r\n",
    "proj/docs/r.txt": "hello r txt\n",
    "proj/t.tmp": "hello t\n",
    "proj/excluded.txt": "hello excluded\n",
    "proj/dotignored.txt": "hello dotignored\n",
    "proj/B.txt": "Hello B\n",
    "proj/_u.txt": "hello u\n",
    "proj/Zed/a": "hello Zed\n",
    "proj/vendor/.git/HEAD": "ref: x\n",
    "proj/vendor/.gitignore": "*.gen\n",
    "proj/vendor/v.tmp": "hello vendored tmp\n",
    "proj/vendor/v.log": "hello vendored log\n",
    "proj/vendor/v.gen": "hello gen\n",
    "proj/crlf.txt": "hello\r\nworld hello\r\n",
    "proj/.github/workflows/ci.yml": "on: push\n",
}

ALL_FILES = [
    "B.txt", "Zed/a", "_u.txt", "bin.dat", "crlf.txt", "docs/r.txt", "keep.log", "keep.rg", "latin.txt",
    "src/a.py", "src/c.txt", "src/docs/q.md", "src/docs.md", "src/sub/b.py", "vendor/v.log", "vendor/v.tmp",
]  # fmt: skip


@pytest.fixture
def proj(workspace: Path) -> Path:
    for rel, content in TREE.items():
        p = workspace / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content.encode())
    (workspace / "proj/bin.dat").write_bytes(b"hello\x00world hello\n")
    (workspace / "proj/latin.txt").write_bytes(b"caf\xe9 hello\n")
    os.symlink("src/a.py", workspace / "proj/link.py")
    os.symlink("src", workspace / "proj/linkdir")
    return workspace / "proj"


def rel(paths, root: Path) -> list[str]:
    return [os.path.relpath(p, root) for p in paths]


# --- the file walk: ripgrep and Python agree -------------------------------------------------

GLOBS = [
    [], ["*"], ["**"], ["*.py"], ["**/*.py"], ["src/*.py"], ["/src/*.py"], ["src/**"], ["src/**/*.py"],
    ["*.{py,txt}"], ["!*.py"], ["!src/**"], ["docs/*"], ["docs/"], ["*.md"], ["**/*.md"], [".env"],
    [".hidden/*"], [".*"], ["?.txt"], ["[a-c]*"], ["[!a-c]*.txt"], ["Zed/**"], ["**/sub/*"], ["sub/*.py"],
    ["build/**"], ["node_modules/**/*.js"], ["*.log"], ["*.gen"], ["link*"], ["**/docs/**"], ["*.tmp"],
]  # fmt: skip


@pytest.mark.parametrize("globs", GLOBS, ids=lambda g: " ".join(g) or "none")
def test_walk_matches_ripgrep(proj, globs):
    by_rg = list(list_files(str(proj), globs, Cancel(), use_rg=True))
    by_python = list(list_files(str(proj), globs, Cancel(), use_rg=False))
    assert by_rg == by_python


@pytest.mark.parametrize("use_rg", [True, False], ids=["rg", "python"])
def test_walk_rules(proj, use_rg):
    def files(*globs: str) -> list[str]:
        return rel(list_files(str(proj), list(globs), Cancel(), use_rg=use_rg), proj)

    # ignore files at every level, .rgignore over .gitignore, nested repo, no hidden, no symlinks
    assert files() == ALL_FILES
    # a glob includes what ignore files exclude, but ignored directories stay closed
    assert files("*.py") == ["src/a.py", "src/sub/b.py", "src/sub/gen_x.py"]
    assert files("*.tmp") == ["src/sub/z.tmp", "t.tmp", "vendor/v.tmp"]
    assert files(".env") == [".env"]
    assert files("!*.txt") == [f for f in ALL_FILES if not f.endswith(".txt")]


# --- find --------------------------------------------------------------------------------


@pytest.mark.parametrize("use_rg", [True, False], ids=["rg", "python"])
async def test_find(ctx, proj, use_rg):
    find = make_find_tool(use_rg=use_rg)
    r = await call(find, ctx, pattern="*.md", path="proj")
    assert text(r) == "proj/src/docs/q.md\nproj/src/docs.md"  # docs/r.md is ignored
    assert r.details == {"path": str(proj), "count": 2, "truncated": False}
    # hidden files are listed, ignored ones are not (the pattern never brings them back), .git never
    py = await call(find, ctx, pattern="**/*.py", path="proj")
    assert text(py) == "proj/.hidden/h.py\nproj/src/a.py\nproj/src/sub/b.py"
    assert (
        text(await call(find, ctx, pattern=".github/**/*.yml", path="proj"))
        == "proj/.github/workflows/ci.yml"
    )
    assert (
        text(await call(find, ctx, pattern="HEAD", path="proj"))
        == "No files matching 'HEAD' under " + str(proj) + "."
    )
    assert text(await call(find, ctx, pattern="*.log")) == "proj/keep.log\nproj/vendor/v.log"
    # a pattern with "/" is anchored at the search directory; absolute and ./ forms work too
    inside = await call(find, ctx, pattern="sub/*.py", path="proj/src")
    assert text(inside) == "proj/src/sub/b.py"
    assert text(await call(find, ctx, pattern=f"{proj}/src/*.py", path="proj")) == "proj/src/a.py"
    assert text(await call(find, ctx, pattern="./src/*.py", path="proj")) == "proj/src/a.py"
    capped = await call(find, ctx, pattern="*.txt", path="proj", limit=2)
    assert text(capped) == (
        "proj/B.txt\nproj/_u.txt\n\n[Showing the first 2 files; narrow the pattern or the path to see more.]"
    )
    assert capped.details["truncated"] is True
    none = await call(find, ctx, pattern="*.rs", path="proj")
    assert text(none) == f"No files matching '*.rs' under {proj}."


async def test_find_outside_the_workspace_reports_absolute_paths(ctx, tmp_path):
    write(tmp_path / "elsewhere/f.txt", "x")
    r = await call(make_find_tool(), ctx, pattern="*.txt", path=str(tmp_path / "elsewhere"))
    assert text(r) == str(tmp_path / "elsewhere/f.txt")


async def test_find_errors(ctx, proj):
    find = make_find_tool()
    assert await fails(find, ctx, pattern="*", path="nope") == f"Path not found: {ctx.cwd}/nope"
    assert await fails(find, ctx, pattern="*", path="proj/B.txt") == (
        f"Not a directory: {proj}/B.txt (find searches directories; use read or ls)."
    )


# --- grep --------------------------------------------------------------------------------

QUERIES = [
    dict(pattern="hello"),
    dict(pattern="hello", output_mode="content"),
    dict(pattern="hello", output_mode="content", context=1),
    dict(pattern="hello", output_mode="content", context=2, glob="*.py"),
    dict(pattern="HELLO", ignore_case=True, output_mode="count"),
    dict(pattern="^hello$", output_mode="content"),
    dict(pattern=r"hello$", output_mode="content"),
    dict(pattern=r"\w+\(\)", output_mode="content", glob="!*.txt"),
    dict(pattern="caf", output_mode="content"),
    dict(pattern="hello", output_mode="content", context=1, limit=3),
    dict(pattern="hello", output_mode="files_with_matches", limit=4),
    dict(pattern="hello", output_mode="count", limit=2),
    dict(pattern="absent"),
]  # fmt: skip


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: " ".join(f"{k}={v}" for k, v in q.items()))
async def test_grep_ripgrep_and_python_agree(ctx, proj, query):
    by_rg = await call(make_grep_tool(use_rg=True), ctx, path="proj", **query)
    by_python = await call(make_grep_tool(use_rg=False), ctx, path="proj", **query)
    assert text(by_rg) == text(by_python)
    assert by_rg.details == by_python.details


@pytest.mark.parametrize("use_rg", [True, False], ids=["rg", "python"])
async def test_grep_output_modes(ctx, proj, use_rg):
    grep = make_grep_tool(use_rg=use_rg)
    files = await call(grep, ctx, pattern="hello", path="proj/src")
    assert text(files) == "proj/src/a.py\nproj/src/docs/q.md\nproj/src/docs.md\nproj/src/sub/b.py"
    assert files.details == {"mode": "files_with_matches", "files": 4, "shown": 4, "truncated": False}
    content = await call(
        grep, ctx, pattern="hello", path="proj/src", glob="*.py", output_mode="content", context=1
    )
    assert text(content) == "\n".join(
        [
            "proj/src/a.py-1-x = 1",
            "proj/src/a.py:2:hello there",
            "proj/src/a.py-3-y",
            "proj/src/a.py-4-z",
            "proj/src/a.py:5:hello again",
            "--",
            "proj/src/sub/b.py:1:def hello():",
            "proj/src/sub/b.py-2-    return 'HELLO'",
            "--",
            "proj/src/sub/gen_x.py:1:hello generated",
        ]
    )
    gapped = await call(grep, ctx, pattern="^[xz]", path="proj/src/a.py", output_mode="content")
    assert text(gapped) == "proj/src/a.py:1:x = 1\nproj/src/a.py:4:z"
    with_gap = await call(grep, ctx, pattern="x =|again", path="proj/src", output_mode="content", context=1)
    assert (
        text(with_gap)
        == "proj/src/a.py:1:x = 1\nproj/src/a.py-2-hello there\n--\nproj/src/a.py-4-z\nproj/src/a.py:5:hello again"
    )
    count = await call(grep, ctx, pattern="hello", path="proj/src", ignore_case=True, output_mode="count")
    assert text(count) == "proj/src/a.py:2\nproj/src/docs/q.md:1\nproj/src/docs.md:1\nproj/src/sub/b.py:2"
    limited = await call(grep, ctx, pattern="hello", path="proj", output_mode="content", limit=2)
    assert text(limited) == (
        "proj/Zed/a:1:hello Zed\nproj/_u.txt:1:hello u\n\n[Showing the first 2 matches; narrow the search or raise limit.]"
    )
    assert limited.details == {"mode": "content", "files": 2, "shown": 2, "truncated": True}
    crlf = await call(grep, ctx, pattern="world", path="proj", output_mode="content")
    assert text(crlf) == "proj/crlf.txt:2:world hello"
    latin = await call(grep, ctx, pattern="caf", path="proj", output_mode="content")
    assert text(latin) == "proj/latin.txt:1:caf\ufffd hello"


async def test_grep_single_file_binary_and_long_lines(ctx, proj):
    grep = make_grep_tool()
    assert (
        text(await call(grep, ctx, pattern="hello", path="proj/bin.dat"))
        == f"No matches for 'hello' in {proj}/bin.dat."
    )
    # an ignored or hidden file named explicitly is searched
    assert (
        text(await call(grep, ctx, pattern="SECRET", path="proj/.env", output_mode="content"))
        == "proj/.env:1:SECRET=hello"
    )
    write(proj / "wide.txt", "w" * 2000 + "\n")
    wide = text(await call(grep, ctx, pattern="w", path="proj/wide.txt", output_mode="content"))
    assert wide == "proj/wide.txt:1:" + "w" * 500 + "… [line cut]"


@pytest.mark.parametrize("use_rg", [True, False], ids=["rg", "python"])
async def test_grep_errors(ctx, proj, use_rg):
    grep = make_grep_tool(use_rg=use_rg)
    msg = await fails(grep, ctx, pattern="(unclosed", path="proj")
    assert msg.startswith(
        "ripgrep failed: regex parse error" if use_rg else "Invalid regular expression '(unclosed'"
    )
    assert await fails(grep, ctx, pattern="x", path="missing") == f"Path not found: {ctx.cwd}/missing"


async def test_grep_output_character_cap(ctx, workspace):
    write(workspace / "big.txt", ("needle " + "x" * 400 + "\n") * 200)
    r = await call(make_grep_tool(), ctx, pattern="needle", output_mode="content")
    assert len(text(r)) < 31_000
    assert text(r).endswith("[Output cut at 30000 characters; narrow the search.]")
    assert r.details["truncated"] is True


# --- ls ----------------------------------------------------------------------------------


async def test_ls(ctx, proj):
    ls = make_ls_tool()
    r = await call(ls, ctx, path="proj/src")
    assert text(r) == "a.py\nc.txt\ndocs/\ndocs.md\nsub/"
    assert r.details == {"path": f"{proj}/src", "count": 5, "truncated": False}
    # hidden entries included, symlinks to directories marked, case-insensitive order, ignore globs
    top = text(await call(ls, ctx, path="proj", ignore=["*.txt", "*.rg", "v*", ".git*"]))
    assert top.split("\n") == [
        ".env", ".hidden/", ".ignore", ".rgignore", "bin.dat", "build/", "docs/", "keep.log",
        "link.py", "linkdir/", "node_modules/", "src/", "t.tmp", "x.log", "Zed/",
    ]  # fmt: skip


async def test_ls_empty_cap_and_errors(ctx, workspace):
    ls = make_ls_tool()
    (workspace / "empty").mkdir()
    assert text(await call(ls, ctx, path="empty")) == f"{workspace}/empty is empty."
    many = workspace / "many"
    many.mkdir()
    for i in range(MAX_ENTRIES + 5):
        (many / f"f{i:04d}").touch()
    r = await call(ls, ctx, path="many")
    lines = text(r).split("\n")
    assert lines[0] == "f0000" and lines[MAX_ENTRIES - 1] == f"f{MAX_ENTRIES - 1:04d}"
    assert lines[-1] == f"[Showing {MAX_ENTRIES} of {MAX_ENTRIES + 5} entries; use find or a narrower path.]"
    assert r.details["truncated"] is True
    assert await fails(ls, ctx, path="nope") == f"Directory not found: {workspace}/nope"
    write(workspace / "f.txt", "x")
    assert await fails(ls, ctx, path="f.txt") == f"Not a directory: {workspace}/f.txt (use read for files)."


@pytest.mark.parametrize("use_rg", [True, False], ids=["rg", "python"])
async def test_grep_stops_early_in_a_file_with_many_matches(ctx, workspace, use_rg):
    write(workspace / "log.txt", "".join(f"match {i}\n" for i in range(50_000)))
    r = await call(
        make_grep_tool(use_rg=use_rg), ctx, pattern="match", output_mode="content", context=1, limit=2
    )
    assert text(r) == (
        "log.txt:1:match 0\nlog.txt:2:match 1\n\n[Showing the first 2 matches; narrow the search or raise limit.]"
    )
