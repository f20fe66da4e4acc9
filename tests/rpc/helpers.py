"""Drive `ama --mode rpc` as a subprocess, line by line."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from tests.conftest import ama_cmd


class Rpc:
    def __init__(self, cwd: Path, *args: str) -> None:
        self.proc = subprocess.Popen(
            ama_cmd("--mode", "rpc", *args), cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, bufsize=0,
        )
        self.lines: queue.Queue = queue.Queue()
        self.seen: list[dict] = []
        self._n = 0
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        for raw in self.proc.stdout:
            self.lines.put(json.loads(raw))
        self.lines.put(None)

    def send_raw(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, type_: str, **params: Any) -> str:
        self._n += 1
        rid = f"r{self._n}"
        self.send_raw(json.dumps({"type": type_, "id": rid, **params}).encode() + b"\n")
        return rid

    def next(self, timeout: float = 30) -> dict:
        item = self.lines.get(timeout=timeout)
        if item is None:
            raise EOFError("the RPC process closed stdout")
        self.seen.append(item)
        return item

    def until(self, pred, timeout: float = 30) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            item = self.next(max(0.1, deadline - time.monotonic()))
            if pred(item):
                return item

    def response(self, rid: str, timeout: float = 30) -> dict:
        return self.until(lambda m: m.get("type") == "response" and m.get("id") == rid, timeout)

    def call(self, type_: str, **params: Any) -> dict:
        return self.response(self.send(type_, **params))

    def event(self, type_: str, timeout: float = 30) -> dict:
        return self.until(lambda m: m.get("type") == type_, timeout)

    def close(self, timeout: float = 30) -> int:
        self.proc.stdin.close()
        while True:
            try:
                if self.next(timeout) is None:
                    break
            except EOFError:
                break
        return self.proc.wait(timeout)
