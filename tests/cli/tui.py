"""Driving ``ama`` in tmux against the slow local model server (helpers for the UI tests)."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

from tests.cli.slow_server import SlowServer
from tests.conftest import ROOT


class Tmux:
    def __init__(self, ws: Path, ama_home: Path, server: SlowServer, *args: str, env: str = "") -> None:
        if shutil.which("tmux") is None:  # .ci/run installs tmux; this only guards odd local setups
            raise AssertionError("tmux is required for the interactive tests (apt-get install tmux)")
        (ama_home / "config.json").write_text(json.dumps({"providers": {"slow": server.provider()}}))
        self.name = f"ama-tui-{uuid.uuid4().hex[:8]}"
        cmd = (
            f"cd {shlex.quote(str(ws))} && unset COLUMNS LINES NO_COLOR && {env} AMA_HOME={shlex.quote(str(ama_home))} "
            f"PYTHONPATH={shlex.quote(str(ROOT / 'src'))} {shlex.quote(sys.executable)} -m ama --model slow/m "
            + " ".join(shlex.quote(a) for a in args)
            + "; echo EXITED=$?; sleep 60"
        )
        subprocess.run(["tmux", "new-session", "-d", "-s", self.name, "-x", "110", "-y", "40", cmd], check=True)

    def screen(self) -> str:
        return subprocess.run(
            ["tmux", "capture-pane", "-t", self.name, "-p", "-S", "-300"], capture_output=True, text=True
        ).stdout

    def visible(self) -> str:
        return subprocess.run(["tmux", "capture-pane", "-t", self.name, "-p"], capture_output=True, text=True).stdout

    def keys(self, *keys: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, *keys], check=True)

    def type(self, text: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, "-l", text], check=True)

    def paste(self, text: str) -> None:
        """Paste ``text`` as a terminal does (bracketed, when the program asked for it)."""
        buf = f"b{self.name}"
        subprocess.run(["tmux", "set-buffer", "-b", buf, text], check=True)
        subprocess.run(["tmux", "paste-buffer", "-p", "-d", "-b", buf, "-t", self.name], check=True)

    def wait(self, text: str, timeout: float = 30, *, visible: bool = False, count: int = 1) -> str:
        """The screen once ``text`` is on it (``count`` times: the n-th occurrence)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            out = self.visible() if visible else self.screen()
            if out.count(text) >= count:
                return out
            time.sleep(0.05)
        raise AssertionError(f"{text!r} did not appear; screen:\n{self.screen()}")

    def wait_gone(self, text: str, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            out = self.visible()
            if text not in out:
                return out
            time.sleep(0.05)
        raise AssertionError(f"{text!r} did not go away; screen:\n{self.visible()}")

    def close(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], capture_output=True)


def normalize(frame: str) -> str:
    """A frame with times, ids, spinner glyphs and trailing blanks made stable."""
    frame = re.sub(r"[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]", "*", frame)
    frame = re.sub(r"\b\d+m \d\ds\b|\b\d+s\b", "<t>", frame)
    frame = re.sub(r"\b[0-9a-f]{8,}\b", "<id>", frame)
    frame = re.sub(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\d)?", "<time>", frame)
    frame = re.sub(r"\b\d\d:\d\d\b", "<time>", frame)
    return "\n".join(line.rstrip() for line in frame.rstrip().splitlines())
