"""Images given on the command line (``ama -p --image FILE``) and images reused by ``--from``.

Every image goes through :func:`load_image`: a regular file of at most ``MAX_IMAGE_BYTES``
whose first bytes are those of a PNG, JPEG, GIF or WebP file (the extension does not count).
``--from`` writes the reused message's images to a temporary directory first
(:func:`reused_image_files`), so they are checked the same way, and removes it after the run.
"""

from __future__ import annotations

import base64
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from ama.errors import InvalidArguments
from ama.messages import ImageContent

#: the largest image accepted (Anthropic's per-image limit; OpenAI's is larger)
MAX_IMAGE_BYTES = 5 * 1024 * 1024

_EXT = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}


def sniff_mime(head: bytes) -> str | None:
    """The image type of a file from its first 12 bytes, or None."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def load_image(path: str, *, option: str = "--image") -> ImageContent:
    """The image at ``path``, checked; ``InvalidArguments`` naming the file otherwise."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise InvalidArguments(f"{option} {path}: no such file") from None
    except OSError as e:
        raise InvalidArguments(f"{option} {path}: cannot read ({e.strerror})") from None
    if not os.path.isfile(path):
        raise InvalidArguments(f"{option} {path}: not a regular file")
    if st.st_size > MAX_IMAGE_BYTES:
        raise InvalidArguments(
            f"{option} {path}: {st.st_size} bytes is over the {MAX_IMAGE_BYTES // (1024 * 1024)} MiB limit for an image"
        )
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_IMAGE_BYTES + 1)
    except OSError as e:
        raise InvalidArguments(f"{option} {path}: cannot read ({e.strerror})") from None
    if len(data) > MAX_IMAGE_BYTES:  # grew since the stat
        raise InvalidArguments(f"{option} {path}: over the {MAX_IMAGE_BYTES // (1024 * 1024)} MiB limit for an image")
    mime = sniff_mime(data[:12])
    if mime is None:
        raise InvalidArguments(f"{option} {path}: not a PNG, JPEG, GIF or WebP image")
    return ImageContent(data=base64.b64encode(data).decode("ascii"), mime_type=mime)


def load_images(paths: Sequence[str], *, option: str = "--image") -> list[ImageContent]:
    return [load_image(p, option=option) for p in paths]


@contextmanager
def reused_image_files(images: Sequence[ImageContent]) -> Iterator[list[str]]:
    """Write reused images to a private temporary directory; yield their paths; remove it.
    No images: no directory (nothing is written, so a full disk does not fail a plain run)."""
    if not images:
        yield []
        return
    tmp = tempfile.mkdtemp(prefix="ama-from-")
    try:
        paths = []
        for i, img in enumerate(images, 1):
            path = os.path.join(tmp, f"image-{i}.{_EXT.get(img.mime_type, 'bin')}")
            try:
                raw = base64.b64decode(img.data, validate=True)
            except ValueError:
                raise InvalidArguments(f"--from: image {i} of the reused message is not valid base64") from None
            with open(path, "wb") as f:
                f.write(raw)
            paths.append(path)
        yield paths
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def check_model_takes_images(model_ref: str, takes_images: bool, count: int, what: str) -> None:
    if count and not takes_images:
        raise InvalidArguments(
            f"model {model_ref} does not take images ({what}); choose one that does with --model"
        )
