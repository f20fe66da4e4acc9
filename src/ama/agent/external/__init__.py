"""External agents as task runners: any ACP agent (``acp:<program>``, ``acp:ama`` is ama
itself), Claude Code (``claude``) and Codex (``codex``), behind one seam with the task host
(docs/external-agents.md).

The host (the sub-agents side) calls :func:`run_external_task` and :func:`list_external_agents`;
the runner reports progress with ``host.update``, asks approvals with ``host.ask_permission``
and appends ``ama.agent-session`` / ``ama.agent-usage`` records with ``host.record``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ama.agent.external.base import (
    ExternalTaskHost,
    ExternalTaskRequest,
    ExternalTaskResult,
    Usage,
    confirm_first_run,
    failed,
)
from ama.agent.external.probe import list_external_agents
from ama.agent.external.proc import race
from ama.agent.external.settings import SettingsError, allow_list, is_allowed, spec_for

__all__ = [
    "ExternalTaskHost",
    "ExternalTaskRequest",
    "ExternalTaskResult",
    "list_external_agents",
    "run_external_task",
]


async def run_external_task(
    req: ExternalTaskRequest, host: ExternalTaskHost, cancel: asyncio.Event, config: dict[str, Any]
) -> ExternalTaskResult:
    """Run one prompt of a task on an external agent, to its end. Never raises for the
    agent's failures: a refused, absent, crashed or cancelled agent is a result."""
    try:
        spec = spec_for(req.agent, config)
        allow = allow_list(config)
    except SettingsError as e:
        return failed(req, str(e))
    if not is_allowed(req.agent, allow):
        return failed(
            req, f"external agent {req.agent} is not allowed (agents.external.allow: {', '.join(allow) or 'none'})"
        )
    program = spec.program()
    if program is None:
        return failed(
            req,
            f"{req.agent} is not installed: no {spec.command!r} on PATH"
            f" (install it, or set agents.external.agents[{req.agent!r}].command)",
        )
    if spec.is_acp:
        from ama.agent.external.acp_runner import run_acp

        mode, note = "ask", f"{req.agent} runs outside ama's tools; its approvals are asked here"
        runner = run_acp(req, spec, [*program, *spec.args], host, cancel)
    else:
        from ama.agent.external.cli_runners import cli_mode, run_cli

        mode = cli_mode(spec)
        note = f"{req.agent} runs outside ama's tools and sandbox with its own permissions ({mode})"
        runner = run_cli(req, spec, program, host, cancel)
    try:
        if spec.confirm:
            asked, ok = await race(confirm_first_run(host, req, mode, note), cancel)
            if asked and not ok:
                if getattr(host, "unattended", False):
                    return failed(
                        req,
                        f"running {req.agent} needs its first-run confirmation and nobody can answer here"
                        f" (unattended); set agents.external.agents[{req.agent!r}].confirm to false in the"
                        " user config to run it without asking",
                    )
                return failed(req, f"running {req.agent} was declined")
        if cancel.is_set():
            return ExternalTaskResult("aborted", "", req.session_id, Usage().to_result(), "cancelled")
        return await runner
    finally:
        runner.close()  # never started when declined or cancelled (a no-op once awaited)
