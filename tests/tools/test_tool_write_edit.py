"""write and edit: the read-before-write rule, replacement errors, diffs, modes, hooks."""

from __future__ import annotations

import hashlib
import os
import stat

import pytest

from ama.tools.edit import make_edit_tool
from ama.tools.read import make_read_tool
from ama.tools.write import make_write_tool
from tests.tools.helpers import call, fails, text, write

pytestmark = pytest.mark.anyio
read, write_tool, edit = make_read_tool(), make_write_tool(), make_edit_tool()


# --- write ----------------------------------------------------------------------------


async def test_write_creates_file_and_parents(ctx, workspace):
    r = await call(write_tool, ctx, path="deep/er/new.txt", content="a\nb\n")
    p = workspace / "deep/er/new.txt"
    assert p.read_text() == "a\nb\n"
    assert text(r) == f"Created {p} (2 lines, 4 bytes)."
    sha = hashlib.sha256(b"a\nb\n").hexdigest()  # what was written: a rewind in a later process trusts it
    assert r.details == {"path": str(p), "created": True, "bytes": 4, "lines": 2, "sha256": sha}
    os.mkfifo(workspace / "pipe")
    assert await fails(write_tool, ctx, path="pipe", content="x") == (
        f"{workspace}/pipe is not a regular file (a pipe, socket or device)."
    )


async def test_write_existing_requires_read(ctx, workspace):
    p = write(workspace / "old.txt", "keep me\n")
    msg = await fails(write_tool, ctx, path="old.txt", content="x")
    assert msg == f"File has not been read yet: {p}. Read it first before writing to it."
    assert p.read_text() == "keep me\n"
    await call(read, ctx, path="old.txt")
    r = await call(write_tool, ctx, path="old.txt", content="new\n")
    assert p.read_text() == "new\n"
    assert text(r) == f"Overwrote {p} (1 line, 4 bytes)."
    assert r.details["diff"] == "--- a/old.txt\n+++ b/old.txt\n@@ -1 +1 @@\n-keep me\n+new\n"


async def test_write_refuses_a_file_changed_since_read(ctx, workspace):
    p = write(workspace / "c.txt", "one\n")
    await call(read, ctx, path="c.txt")
    p.write_text("changed by the user\n")
    msg = await fails(write_tool, ctx, path="c.txt", content="mine")
    assert msg == (
        f"File has been modified since it was read (by the user, a formatter or a command): {p}. "
        "Read it again before writing to it."
    )
    await call(read, ctx, path="c.txt")
    await call(write_tool, ctx, path="c.txt", content="mine")
    assert p.read_text() == "mine"


async def test_same_content_with_new_mtime_still_counts_as_read(ctx, workspace):
    p = write(workspace / "t.txt", "same\n")
    await call(read, ctx, path="t.txt")
    st = p.stat()
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))  # touch: content unchanged
    await call(write_tool, ctx, path="t.txt", content="ok\n")
    assert p.read_text() == "ok\n"


async def test_write_keeps_mode_and_writes_through_symlinks(ctx, workspace):
    p = write(workspace / "run.sh", "#!/bin/sh\necho hi\n")
    p.chmod(0o755)
    link = workspace / "link.sh"
    link.symlink_to(p)
    await call(read, ctx, path="link.sh")
    await call(write_tool, ctx, path="link.sh", content="#!/bin/sh\necho bye\n")
    assert stat.S_IMODE(p.stat().st_mode) == 0o755
    assert link.is_symlink()
    assert p.read_text() == "#!/bin/sh\necho bye\n"


async def test_write_then_write_again_needs_no_read(ctx, workspace):
    await call(write_tool, ctx, path="w.txt", content="1")
    await call(write_tool, ctx, path="w.txt", content="2")
    assert (workspace / "w.txt").read_text() == "2"


async def test_write_to_a_directory(ctx, workspace):
    (workspace / "d").mkdir()
    assert await fails(write_tool, ctx, path="d", content="x") == f"{workspace}/d is a directory."


async def test_checkpoint_hooks_around_writes(ctx, workspace):
    calls: list[tuple] = []
    ctx.before_write = lambda path: calls.append(("before", path, os.path.exists(path)))
    ctx.after_write = lambda path, data: calls.append(("after", path, data))
    p = str(workspace / "h.txt")
    await call(write_tool, ctx, path="h.txt", content="v1\n")
    await call(edit, ctx, path="h.txt", old_string="v1", new_string="v2")
    assert calls == [
        ("before", p, False),
        ("after", p, b"v1\n"),
        ("before", p, True),
        ("after", p, b"v2\n"),
    ]


# --- edit -----------------------------------------------------------------------------


async def test_edit_replaces_unique_string_with_diff(ctx, workspace):
    p = write(workspace / "m.py", "def f():\n    return 1\n\n\ndef g():\n    return 2\n")
    await call(read, ctx, path="m.py")
    r = await call(edit, ctx, path="m.py", old_string="return 2", new_string="return 3")
    assert p.read_text().endswith("    return 3\n")
    assert text(r) == f"Edited {p}: replaced 1 occurrence at line 6."
    assert r.details["replacements"] == 1
    assert r.details["firstChangedLine"] == 6
    assert r.details["diff"] == (
        "--- a/m.py\n+++ b/m.py\n@@ -3,4 +3,4 @@\n \n \n def g():\n-    return 2\n+    return 3\n"
    )


async def test_read_then_edit_then_edit_again(ctx, workspace):
    p = write(workspace / "e.txt", "alpha\nbeta\n")
    await call(read, ctx, path="e.txt")
    await call(edit, ctx, path="e.txt", old_string="alpha", new_string="ALPHA")
    await call(edit, ctx, path="e.txt", old_string="beta", new_string="BETA")
    assert p.read_text() == "ALPHA\nBETA\n"


async def test_edit_requires_read_and_unchanged(ctx, workspace):
    p = write(workspace / "u.txt", "x = 1\n")
    msg = await fails(edit, ctx, path="u.txt", old_string="1", new_string="2")
    assert msg == f"File has not been read yet: {p}. Read it first before writing to it."
    await call(read, ctx, path="u.txt")
    p.write_text("x = 10\n")
    msg = await fails(edit, ctx, path="u.txt", old_string="10", new_string="2")
    assert msg.startswith(
        f"File has been modified since it was read (by the user, a formatter or a command): {p}."
    )
    p.unlink()
    assert await fails(edit, ctx, path="u.txt", old_string="1", new_string="2") == f"File not found: {p}"


async def test_edit_not_found_hints(ctx, workspace):
    p = write(workspace / "n.py", "if x:\n    call(a,\n         b)\n")
    await call(read, ctx, path="n.py")
    assert await fails(edit, ctx, path="n.py", old_string="nothing", new_string="y") == (
        f"old_string was not found in {p}. Read the file again to see its current content."
    )
    assert await fails(edit, ctx, path="n.py", old_string="call(a,\n b)", new_string="y") == (
        f"old_string was not found in {p}. A match that differs only in whitespace or indentation "
        "starts at line 2; copy the text exactly as the file has it."
    )
    assert await fails(edit, ctx, path="n.py", old_string="     1\tif x:", new_string="y") == (
        f"old_string was not found in {p}. old_string seems to include the line numbers that read shows; "
        "leave them out."
    )


async def test_edit_found_many_times(ctx, workspace):
    p = write(workspace / "many.txt", "a = 1\nb = 1\nc = 2\nd = 1\n")
    await call(read, ctx, path="many.txt")
    assert await fails(edit, ctx, path="many.txt", old_string="= 1", new_string="= 9") == (
        f"old_string was found 3 times in {p} (lines 1, 2, 4). Include more surrounding context to make it "
        "unique, or set replace_all to true to replace every occurrence."
    )
    r = await call(edit, ctx, path="many.txt", old_string="= 1", new_string="= 9", replace_all=True)
    assert p.read_text() == "a = 9\nb = 9\nc = 2\nd = 9\n"
    assert text(r) == f"Edited {p}: replaced 3 occurrences."
    assert r.details["replacements"] == 3


async def test_edit_argument_errors(ctx, workspace):
    write(workspace / "z.txt", "z\n")
    await call(read, ctx, path="z.txt")
    assert await fails(edit, ctx, path="z.txt", old_string="z", new_string="z") == (
        "Invalid arguments for edit: old_string and new_string are identical; there is nothing to change"
    )
    assert await fails(edit, ctx, path="z.txt", old_string="", new_string="a") == (
        "Invalid arguments for edit: old_string must not be empty (to create a file use write)"
    )
    assert (
        await fails(edit, ctx, path="z.txt", old_string="z")
        == "Invalid arguments for edit: 'new_string' is required"
    )


async def test_edit_crlf_file_with_lf_strings(ctx, workspace):
    p = write(workspace / "dos.txt", b"one\r\ntwo\r\nthree\r\n")
    await call(read, ctx, path="dos.txt")
    await call(edit, ctx, path="dos.txt", old_string="one\ntwo", new_string="1\n2")
    assert p.read_bytes() == b"1\r\n2\r\nthree\r\n"


async def test_edit_keeps_bytes_that_are_not_utf8(ctx, workspace):
    p = write(workspace / "latin.txt", b"caf\xe9 = 1\nname = 'x'\n")
    await call(read, ctx, path="latin.txt")
    r = await call(edit, ctx, path="latin.txt", old_string="'x'", new_string="'y'")
    assert p.read_bytes() == b"caf\xe9 = 1\nname = 'y'\n"
    assert "+name = 'y'" in r.details["diff"]


async def test_edit_diff_marks_missing_final_newline(ctx, workspace):
    write(workspace / "nl.txt", "a\nb")
    await call(read, ctx, path="nl.txt")
    r = await call(edit, ctx, path="nl.txt", old_string="b", new_string="c")
    assert r.details["diff"].endswith("-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n")
