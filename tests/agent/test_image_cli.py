"""``ama -p --image FILE`` and the images of ``--from``: checks, exit codes, what is sent."""

from __future__ import annotations

import base64
import json
import os
import struct
import subprocess
import zlib
from pathlib import Path

from ama.messages import ImageContent, TextContent, UserMessage
from ama.session.reader import read_session
from ama.session.store import Session
from tests.agent.helpers import write_script
from tests.conftest import ama_cmd


def png_bytes() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0\0\0\0\0")) + chunk(b"IEND", b"")


GIF = b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;"


def run(cwd: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    e = {**os.environ, **(env or {})}
    return subprocess.run(ama_cmd(*args), cwd=cwd, capture_output=True, text=True, timeout=60, env=e, stdin=subprocess.DEVNULL)


def first_user(path: str) -> UserMessage:
    return next(e.message for e in read_session(path).entries if e.type == "message" and isinstance(e.message, UserMessage))


def text_only_model(ama_home: Path) -> str:
    (ama_home / "config.json").write_text(json.dumps({"providers": {"local": {
        "api": "openai-completions", "baseUrl": "http://127.0.0.1:9/v1", "apiKey": "x",
        "models": [{"id": "textonly", "input": ["text"]}]}}}))  # fmt: skip
    return "local/textonly"


def test_images_are_sent_with_the_prompt(tmp_path: Path) -> None:
    (tmp_path / "shot.png").write_bytes(png_bytes())
    (tmp_path / "anim.dat").write_bytes(GIF)  # the type comes from the bytes, not the name
    model = write_script(tmp_path / "s.json", ["seen"])
    p = run(tmp_path, "-p", "what is this?", "--image", "shot.png", "--image", "anim.dat", "--model", model,
            "--output-format", "json")  # fmt: skip
    assert p.returncode == 0, p.stderr
    msg = first_user(json.loads(p.stdout)["sessionFile"])
    assert isinstance(msg.content, list)
    assert isinstance(msg.content[0], TextContent) and msg.content[0].text == "what is this?"
    imgs = [b for b in msg.content if isinstance(b, ImageContent)]
    assert [i.mime_type for i in imgs] == ["image/png", "image/gif"]
    assert base64.b64decode(imgs[0].data) == png_bytes()


def test_bad_images_exit_2_naming_the_file(tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", ["unused"])
    (tmp_path / "fake.png").write_text("not an image")
    (tmp_path / "huge.png").write_bytes(png_bytes() + b"\0" * (5 * 1024 * 1024))
    (tmp_path / "dir.png").mkdir()
    for name, why in (("missing.png", "no such file"), ("fake.png", "not a PNG, JPEG, GIF or WebP image"),
                      ("huge.png", "5242948 bytes is over the 5 MiB limit"), ("dir.png", "not a regular file")):  # fmt: skip
        p = run(tmp_path, "-p", "hi", "--image", name, "--model", model)
        assert p.returncode == 2, (name, p.stderr)
        assert f"--image {name}: {why}" in p.stderr and "Traceback" not in p.stderr
    assert not list(Path(os.environ["AMA_HOME"]).rglob("*.jsonl"))  # refused before any session was written


def test_a_model_without_images_exits_2_with_its_name(tmp_path: Path, ama_home: Path) -> None:
    (tmp_path / "shot.png").write_bytes(png_bytes())
    model = text_only_model(ama_home)
    p = run(tmp_path, "-p", "hi", "--image", "shot.png", "--model", model)
    assert p.returncode == 2
    assert "model local/textonly does not take images (1 from --image)" in p.stderr


def test_image_needs_print_mode(tmp_path: Path) -> None:
    (tmp_path / "shot.png").write_bytes(png_bytes())
    p = run(tmp_path, "--mode", "rpc", "--image", "shot.png")
    assert p.returncode == 2 and "--image works with -p only" in p.stderr


def _source(sessions_dir: Path, cwd: str, image: ImageContent) -> Session:
    s = Session.create(cwd, sessions_dir)
    s.append_message(UserMessage(content=[TextContent(text="look at this"), image]))
    s.close()
    return s


def test_from_checks_reused_images_in_a_temporary_directory_removed_after(tmp_path: Path, sessions_dir: Path, ama_home: Path) -> None:
    good = ImageContent(data=base64.b64encode(png_bytes()).decode(), mime_type="image/png")
    src = _source(sessions_dir, str(tmp_path), good)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    model = write_script(tmp_path / "s.json", ["ok"])
    p = run(tmp_path, "-p", "--from", src.id, "--model", model, "--output-format", "json", env={"TMPDIR": str(tmp)})
    assert p.returncode == 0, p.stderr
    imgs = [b for b in first_user(json.loads(p.stdout)["sessionFile"]).content if isinstance(b, ImageContent)]
    assert [base64.b64decode(i.data) for i in imgs] == [png_bytes()]
    assert list(tmp.iterdir()) == []  # the temporary copies are gone
    # a reused "image" whose bytes are not an image fails the same check as --image
    bad = _source(sessions_dir, str(tmp_path), ImageContent(data=base64.b64encode(b"<svg/>").decode(), mime_type="image/png"))
    p = run(tmp_path, "-p", "--from", bad.id, "--model", model, env={"TMPDIR": str(tmp)})
    assert p.returncode == 2 and "not a PNG, JPEG, GIF or WebP image" in p.stderr
    assert list(tmp.iterdir()) == []
    p = run(tmp_path, "-p", "--from", src.id, "--model", text_only_model(ama_home), env={"TMPDIR": str(tmp)})
    assert p.returncode == 2 and "model local/textonly does not take images (1 from the reused message)" in p.stderr
    assert list(tmp.iterdir()) == []


def test_the_request_body_carries_the_image(tmp_path: Path, ama_home: Path) -> None:
    from tests.ai.server import LocalServer, Reply, fixture

    server = LocalServer().start()
    try:
        server.queue(Reply(chunks=[fixture("openai_text.sse")]))
        (ama_home / "config.json").write_text(json.dumps({"providers": {"local": {
            "api": "openai-completions", "baseUrl": server.url + "/v1", "apiKey": "x",
            "models": [{"id": "vision", "input": ["text", "image"]}]}}}))  # fmt: skip
        (tmp_path / "shot.png").write_bytes(png_bytes())
        p = run(tmp_path, "-p", "describe", "--image", "shot.png", "--model", "local/vision", "--no-session")
        assert p.returncode == 0, p.stderr
        (req,) = server.requests
        user = [m for m in json.loads(req.body)["messages"] if m["role"] == "user"][-1]
        urls = [part["image_url"]["url"] for part in user["content"] if part.get("type") == "image_url"]
        assert urls == ["data:image/png;base64," + base64.b64encode(png_bytes()).decode()]
    finally:
        server.stop()
