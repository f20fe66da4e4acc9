"""Running command hooks: ``/bin/sh -c``, JSON on stdin, a timeout that kills the process group.

Output protocol (docs/hooks.md):

* exit 0: stdout may be a JSON object — ``{"decision": "allow"|"deny"|"ask", "reason"}``
  (PreToolUse), ``{"additionalContext"}`` (UserPromptSubmit), ``{"decision": "block",
  "reason"}`` (Stop, PostToolUse, UserPromptSubmit).  Claude Code's ``hookSpecificOutput``
  (``permissionDecision``, ``permissionDecisionReason``, ``additionalContext``) is read too.
  Plain text on stdout is context for UserPromptSubmit and ignored elsewhere; text that
  starts with ``{`` but is not a JSON object is reported as an error.
* exit 2: deny (PreToolUse) / block (the others), stderr is the reason.  PostRewind cannot
  block: exit 2 there is reported as an error.
* any other exit, a timeout, a signal: a non-blocking error, reported in the record.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ama.hooks._config import HookSpec, HookTable, parse_hooks

MAX_REASON = 10_000  # characters of a reason or context kept from one hook

_PRE_DECISIONS = {"allow": "allow", "approve": "allow", "deny": "deny", "block": "deny", "ask": "ask"}
_BLOCKING = frozenset({"PostToolUse", "UserPromptSubmit", "Stop"})


@dataclass(frozen=True)
class HookRecord:
    """One hook run, as the ``hook_executed`` event reports it."""

    event: str
    command: str
    exit_code: int | None  # None: timed out or killed by a signal
    duration_ms: int
    timed_out: bool = False
    decision: str | None = None
    error: str | None = None

    def to_event(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "event": self.event,
            "command": self.command,
            "exitCode": self.exit_code,
            "durationMs": self.duration_ms,
            "timedOut": self.timed_out,
        }
        if self.decision is not None:
            out["decision"] = self.decision
        if self.error is not None:
            out["error"] = self.error
        return out


@dataclass(frozen=True)
class HookOutcome:
    """All hooks of one event, aggregated.

    ``decision``: PreToolUse ``"deny"`` beats ``"ask"`` beats ``"allow"``; the other events
    ``"block"`` if any hook blocked; None when no hook decided.  ``reason`` joins the reasons
    of the hooks that gave the winning decision.  Fits ``ama.permissions.HookVerdict``.
    """

    event: str
    decision: str | None = None
    reason: str = ""
    additional_context: str = ""
    records: tuple[HookRecord, ...] = ()

    @property
    def blocked(self) -> bool:
        return self.decision in ("deny", "block")


@dataclass(frozen=True)
class _Verdict:
    decision: str | None = None
    reason: str = ""
    context: str = ""
    error: str | None = None


def _clip(text: str) -> str:
    text = text.strip()
    return text if len(text) <= MAX_REASON else text[:MAX_REASON] + "…"


def _read_json(event: str, data: dict[str, Any]) -> _Verdict:
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    raw = data.get("decision", specific.get("permissionDecision"))
    reason = data.get("reason", specific.get("permissionDecisionReason", ""))
    context = data.get("additionalContext", specific.get("additionalContext", ""))
    if not isinstance(reason, str) or not isinstance(context, str):
        return _Verdict(error="'reason' and 'additionalContext' must be strings")
    context = _clip(context) if event == "UserPromptSubmit" else ""
    if raw is None:
        return _Verdict(None, _clip(reason), context)
    if event == "PreToolUse" and raw in _PRE_DECISIONS:
        return _Verdict(_PRE_DECISIONS[raw], _clip(reason), context)
    if event in _BLOCKING and raw == "block":
        return _Verdict("block", _clip(reason), context)
    allowed = "allow, deny or ask" if event == "PreToolUse" else "block" if event in _BLOCKING else "nothing"
    return _Verdict(None, "", context, f"decision {raw!r} is not valid for {event} (expected {allowed})")


def interpret(event: str, exit_code: int | None, stdout: str, stderr: str) -> _Verdict:
    """What one finished hook says (pure; the protocol in the module docstring)."""
    if exit_code == 2:
        reason = _clip(stderr) or "hook exited with code 2"
        if event == "PreToolUse":
            return _Verdict("deny", reason)
        if event in _BLOCKING:
            return _Verdict("block", reason)
        return _Verdict(error=f"exit code 2 ({event} hooks cannot block): {reason}")
    if exit_code != 0:
        tail = _clip(stderr)[-500:]
        return _Verdict(error=f"exit code {exit_code}" + (f": {tail}" if tail else ""))
    text = stdout.strip()
    if not text:
        return _Verdict()
    if not text.startswith("{"):
        return _Verdict(context=_clip(text) if event == "UserPromptSubmit" else "")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        return _Verdict(error=f"invalid JSON on stdout ({e.msg} at line {e.lineno} column {e.colno})")
    if not isinstance(data, dict):
        return _Verdict(error="JSON on stdout must be an object")
    return _read_json(event, data)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


async def _run_one(
    spec: HookSpec, stdin: bytes, *, cwd: str, env: dict[str, str], timeout: float
) -> tuple[HookRecord, _Verdict]:
    start = time.monotonic()

    def record(exit_code: int | None, verdict: _Verdict, *, timed_out: bool = False) -> HookRecord:
        ms = int((time.monotonic() - start) * 1000)
        return HookRecord(spec.event, spec.command, exit_code, ms, timed_out, verdict.decision, verdict.error)

    try:
        proc = await asyncio.create_subprocess_exec(
            "/bin/sh", "-c", spec.command,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            cwd=cwd, env=env, start_new_session=True,
        )  # fmt: skip
    except OSError as e:
        verdict = _Verdict(error=f"could not start the hook: {e.strerror or e}")
        return record(None, verdict), verdict
    try:
        out, err = await asyncio.wait_for(proc.communicate(stdin), timeout)
    except TimeoutError:
        _kill_group(proc.pid)
        await proc.wait()
        verdict = _Verdict(error=f"timed out after {timeout:g} s; the hook's process group was killed")
        return record(None, verdict, timed_out=True), verdict
    except asyncio.CancelledError:  # the run was aborted: no hook outlives it
        _kill_group(proc.pid)
        await proc.wait()
        raise
    except BaseException:
        _kill_group(proc.pid)
        raise
    code = proc.returncode
    if code is not None and code < 0:
        verdict = _Verdict(error=f"killed by signal {-code}")
        return record(None, verdict), verdict
    verdict = interpret(spec.event, code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"))
    return record(code, verdict), verdict


def _aggregate(event: str, results: list[tuple[HookRecord, _Verdict]]) -> HookOutcome:
    verdicts = [v for _r, v in results]
    order = ("deny", "ask", "allow") if event == "PreToolUse" else ("block",)
    decision = next((d for d in order if any(v.decision == d for v in verdicts)), None)
    reason = "\n".join(v.reason for v in verdicts if v.decision == decision and decision and v.reason)
    context = "\n\n".join(v.context for v in verdicts if v.context)
    return HookOutcome(event, decision, reason, context, tuple(r for r, _v in results))


async def run_hooks(
    event: str,
    payload: Mapping[str, Any],
    config_hooks: Mapping[str, Any] | HookTable | None,
    *,
    cwd: str,
    timeout_default: float = 60,
    env: Mapping[str, str] | None = None,
) -> HookOutcome:
    """Run the hooks configured for ``event`` (concurrently) and aggregate what they say.

    ``payload`` carries ``sessionId``, ``toolName``, ``toolInput``, ``toolResult``, ``prompt``
    … as the event has them; ``event`` and ``cwd`` are added.  Tool events run only hooks
    whose matcher fits ``payload["toolName"]``.  ``config_hooks`` is the ``hooks`` config
    value (validated here; ``InvalidArguments`` names a bad entry) or a parsed ``HookTable``.
    Hook processes get ``AMA_PROJECT_DIR`` (= ``cwd``), ``AMA_HOOK_EVENT`` and, when known,
    ``AMA_SESSION_ID``; ``env`` adds or overrides variables.
    """
    table = parse_hooks(config_hooks)
    tool_name = payload.get("toolName")
    specs = table.for_event(event, tool_name if isinstance(tool_name, str) else None)
    if not specs:
        return HookOutcome(event)
    body = {"event": event, "cwd": cwd, **{k: v for k, v in payload.items() if k not in ("event", "cwd")}}
    stdin = json.dumps(body, default=str, ensure_ascii=False).encode()
    child_env = dict(os.environ)
    child_env.update({"AMA_PROJECT_DIR": cwd, "AMA_HOOK_EVENT": event})
    if isinstance(payload.get("sessionId"), str):
        child_env["AMA_SESSION_ID"] = payload["sessionId"]
    child_env.update(env or {})
    results = await asyncio.gather(
        *(_run_one(s, stdin, cwd=cwd, env=child_env, timeout=s.timeout or timeout_default) for s in specs)
    )
    return _aggregate(event, list(results))
