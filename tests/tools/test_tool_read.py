"""read: line numbers, windows, limits, images, binaries, the read-files record."""

from __future__ import annotations

import base64
import os

import pytest

from ama.messages import ImageContent
from ama.tools.read import MAX_IMAGE_BYTES, MAX_LINE_CHARS, MAX_OUTPUT_CHARS, make_read_tool
from tests.tools.helpers import call, fails, text, write

pytestmark = pytest.mark.anyio
read = make_read_tool()


async def test_numbers_lines_cat_n_style(ctx, workspace):
    write(workspace / "a.py", "import os\n\nprint(1)\n")
    r = await call(read, ctx, path="a.py")
    assert text(r) == "     1\timport os\n     2\t\n     3\tprint(1)"
    assert r.details == {
        "path": str(workspace / "a.py"),
        "totalLines": 3,
        "startLine": 1,
        "endLine": 3,
        "truncated": False,
    }
    assert not r.is_error


async def test_offset_and_limit_with_continuation_note(ctx, workspace):
    write(workspace / "n.txt", "".join(f"line {i}\n" for i in range(1, 11)))
    r = await call(read, ctx, path="n.txt", offset=4, limit=3)
    assert text(r) == (
        "     4\tline 4\n     5\tline 5\n     6\tline 6\n\n"
        "[Showing lines 4-6 of 10; use offset=7 to read more.]"
    )
    assert r.details["truncated"] is True
    tail = await call(read, ctx, path="n.txt", offset=9)
    assert text(tail) == "     9\tline 9\n    10\tline 10"


async def test_default_limit_is_2000_lines(ctx, workspace):
    write(workspace / "big.txt", "x\n" * 2500)
    r = await call(read, ctx, path="big.txt")
    assert r.details["endLine"] == 2000
    assert text(r).endswith("[Showing lines 1-2000 of 2500; use offset=2001 to read more.]")


async def test_long_lines_are_cut_with_a_note(ctx, workspace):
    write(workspace / "wide.txt", "a" * (MAX_LINE_CHARS + 500) + "\nshort\n")
    out = text(await call(read, ctx, path="wide.txt"))
    first = out.split("\n")[0]
    assert first == f"     1\t{'a' * MAX_LINE_CHARS}… [line cut: {MAX_LINE_CHARS + 500} characters]"
    assert "     2\tshort" in out
    assert out.endswith(f"[1 line(s) longer than {MAX_LINE_CHARS} characters were cut.]")


async def test_output_character_cap(ctx, workspace):
    line = "b" * 1000
    write(workspace / "many.txt", (line + "\n") * 300)
    r = await call(read, ctx, path="many.txt")
    out = text(r)
    assert len(out) < MAX_OUTPUT_CHARS + 200
    end = r.details["endLine"]
    assert 90 < end < 100
    assert f"output limit of {MAX_OUTPUT_CHARS} characters reached; use offset={end + 1}" in out


async def test_crlf_and_no_final_newline(ctx, workspace):
    write(workspace / "w.txt", b"one\r\ntwo")
    assert text(await call(read, ctx, path="w.txt")) == "     1\tone\n     2\ttwo"


async def test_not_utf8_is_read_with_replacement(ctx, workspace):
    write(workspace / "latin.txt", b"caf\xe9\n")
    assert text(await call(read, ctx, path="latin.txt")) == "     1\tcaf\ufffd"


async def test_empty_file(ctx, workspace):
    write(workspace / "e.txt", "")
    r = await call(read, ctx, path="e.txt")
    assert text(r) == "(the file is empty)"
    assert ctx.read_files.check(str(workspace / "e.txt")) is None


async def test_errors(ctx, workspace):
    write(workspace / "config.yaml", "a: 1\n")
    assert await fails(read, ctx, path="config.yml") == (
        f"File not found: {workspace}/config.yml. Did you mean: {workspace}/config.yaml?"
    )
    assert await fails(read, ctx, path="nowhere/x") == f"File not found: {workspace}/nowhere/x"
    assert await fails(read, ctx, path=".") == f"{workspace} is a directory; use ls to list it."
    os.mkfifo(workspace / "pipe")  # opening it would wait for a writer for ever
    assert await fails(read, ctx, path="pipe") == (
        f"{workspace}/pipe is not a regular file (a pipe, socket or device); it cannot be read."
    )
    assert await fails(read, ctx, path="config.yaml", offset=5) == (
        f"offset 5 is past the end of {workspace}/config.yaml, which has 1 lines."
    )


async def test_paths_relative_home_and_absolute(ctx, workspace, tmp_path, monkeypatch):
    outside = write(tmp_path / "outside.txt", "far\n")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert text(await call(read, ctx, path="~/outside.txt")) == "     1\tfar"
    assert text(await call(read, ctx, path=str(outside))) == "     1\tfar"
    assert text(await call(read, ctx, path="../outside.txt")) == "     1\tfar"
    assert await fails(read, ctx, path="~/missing") == f"File not found: {tmp_path}/missing"


PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(20)
IMAGES = {
    "p.png": (PNG, "image/png"),
    "j.jpg": (b"\xff\xd8\xff\xe0" + bytes(20), "image/jpeg"),
    "g.gif": (b"GIF89a" + bytes(20), "image/gif"),
    "w.webp": (b"RIFF\x10\x00\x00\x00WEBPVP8 " + bytes(20), "image/webp"),
    "png-named.dat": (PNG, "image/png"),  # by magic bytes, not by name
}


@pytest.mark.parametrize("name", list(IMAGES))
async def test_images_come_back_as_image_blocks(ctx, workspace, name):
    data, mime = IMAGES[name]
    write(workspace / name, data)
    r = await call(read, ctx, path=name)
    image = r.content[1]
    assert isinstance(image, ImageContent)
    assert image.mime_type == mime
    assert base64.b64decode(image.data) == data
    assert text(r) == f"Image {workspace / name} ({mime}, {len(data)} bytes)"
    assert r.details == {"path": str(workspace / name), "mimeType": mime, "bytes": len(data)}
    assert ctx.read_files.check(str(workspace / name)) is None


async def test_image_too_large(ctx, workspace):
    write(workspace / "huge.png", PNG + bytes(MAX_IMAGE_BYTES))
    msg = await fails(read, ctx, path="huge.png")
    assert msg.startswith(
        f"Image {workspace}/huge.png is too large to send (3.8 MiB; the limit is 3.75 MiB)."
    )


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (b"\x7fELF\x02\x01\x01" + bytes(50), "ELF executable"),
        (b"%PDF-1.7\n%\xe2\xe3\n", "PDF document"),
        (b"PK\x03\x04" + bytes(30), "zip archive"),
        (b"some text\x00with a NUL", "binary data"),
    ],
)
async def test_binaries_are_refused(ctx, workspace, data, kind):
    write(workspace / "blob", data)
    msg = await fails(read, ctx, path="blob")
    assert msg == (
        f"Cannot read {workspace}/blob: it is a binary file ({kind}, {len(data)} bytes). "
        "Use bash with a suitable tool (file, xxd, unzip -l, pdftotext, ...) to inspect it."
    )
    assert "has not been read" in ctx.read_files.check(str(workspace / "blob"))


async def test_read_records_the_file_even_for_a_window(ctx, workspace):
    p = write(workspace / "r.txt", "1\n2\n3\n")
    assert ctx.read_files.check(str(p)) is not None
    await call(read, ctx, path="r.txt", offset=2, limit=1)
    assert ctx.read_files.check(str(p)) is None
    assert ctx.read_files.paths() == [os.path.realpath(p)]
