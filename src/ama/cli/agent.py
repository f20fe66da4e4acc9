"""``ama [options] [PROMPT]``: the agent itself — print mode, interactive mode, RPC mode."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from ama.agent.options import agent_options
from ama.errors import InvalidArguments


def _prompt_text(args: argparse.Namespace, *, read_stdin: bool) -> str:
    text = " ".join(args.prompt).strip()
    if read_stdin and not sys.stdin.isatty():
        piped = sys.stdin.read()
        if piped.strip():
            text = f"{text}\n\n{piped.strip()}" if text else piped.strip()
    return text


def agent_main(args: argparse.Namespace) -> int:
    if args.mode == "rpc" and args.from_:
        raise InvalidArguments("--from is not supported in RPC mode")
    if args.image and not (args.print and args.mode == "interactive"):
        raise InvalidArguments("--image works with -p only (RPC and ACP clients send images in prompts)")
    if args.print and args.mode == "interactive":
        import asyncio  # not before the RPC start-up's first answers (rpc/start.py)

        return asyncio.run(print_main(args))
    from ama.modes import run_mode

    return run_mode(args.mode, args)


def resolve_from(args: argparse.Namespace) -> tuple[str, list] | None:
    """``--from <id>[#n]``: the reused message's text and images, or None without --from."""
    if not args.from_:
        return None
    from ama.config.paths import sessions_dir
    from ama.index.reuse import resolve_from as resolve

    res = resolve(str(sessions_dir(args.session_dir)), args.from_)
    return res.text, list(res.images)


def _usage_totals(messages: list[dict]) -> dict[str, Any]:
    keys = ("input", "output", "cacheRead", "cacheWrite", "totalTokens")
    total: dict[str, Any] = {k: 0 for k in keys}
    cost = 0.0
    priced = False
    for m in messages:
        u = m.get("usage") or {}
        for k in keys:
            total[k] += int(u.get(k) or 0)
        if isinstance(u.get("cost"), dict):
            priced = True
            cost += float(u["cost"].get("total") or 0)
    total["cost"] = round(cost, 6) if priced else None
    return total


async def print_main(args: argparse.Namespace) -> int:
    from ama.agent.images import load_images, reused_image_files
    from ama.index.reuse import compose_prompt
    from ama.messages import ImageContent

    reused = resolve_from(args)
    text = _prompt_text(args, read_stdin=reused is None or not sys.stdin.isatty())
    reused_images: list = []
    if reused is not None:
        base, reused_images = reused
        text = compose_prompt(base, text)
    if not text:
        raise InvalidArguments("no prompt: give it as arguments or on stdin (ama -p 'fix the tests')")
    images = load_images(args.image or [])
    # the reused message's images are written out and checked as --image files are (000 --from);
    # the directory is removed after the run
    with reused_image_files([i for i in reused_images if isinstance(i, ImageContent)]) as paths:
        images += load_images(paths, option=f"--from {args.from_}")
        return await _print_run(args, text, images, reused=len(paths))


async def _print_run(args: argparse.Namespace, text: str, images: list, *, reused: int) -> int:
    from ama.agent.compose import build_agent
    from ama.agent.images import check_model_takes_images

    agent, warnings = build_agent(agent_options(args))
    given = []
    if len(images) > reused:
        given.append(f"{len(images) - reused} from --image")
    if reused:
        given.append(f"{reused} from the reused message")
    try:
        check_model_takes_images(agent.model.ref, getattr(agent.model, "images", True), len(images), " and ".join(given))
    except InvalidArguments:
        await agent.close()
        raise
    for w in warnings:
        print(f"ama: warning: {w}", file=sys.stderr)
    fmt = args.output_format
    assistants: list[dict] = []

    def on_event(ev: dict) -> None:
        if ev["type"] == "message_end" and ev["message"].get("role") == "assistant":
            assistants.append(ev["message"])
        if fmt == "stream-json":
            sys.stdout.write(json.dumps(ev, ensure_ascii=False) + "\n")
            sys.stdout.flush()
        elif ev["type"] in ("limit_reached", "model_fallback"):
            from ama.agent.guard import guard_notice

            print(f"ama: {guard_notice(ev)}", file=sys.stderr)
        elif ev["type"] == "auto_retry_start":
            print(
                f"ama: {ev.get('errorMessage')}; retrying in {ev['delayMs'] / 1000:.1f}s "
                f"(attempt {ev['attempt'] + 1} of {ev['maxAttempts']})",
                file=sys.stderr,
            )

    agent.subscribe(on_event)
    import asyncio
    import signal

    loop = asyncio.get_running_loop()
    interrupts = 0

    def on_sigint() -> None:
        nonlocal interrupts
        interrupts += 1
        if interrupts > 1:
            os._exit(130)
        agent.abort()

    loop.add_signal_handler(signal.SIGINT, on_sigint)
    try:
        result = await agent.prompt(text, images or None)
        while agent.plans.followup is not None:  # plan.unattended: approve ran the plan
            task, agent.plans.followup = agent.plans.followup, None
            result = await task
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        await agent.close()
    rec = result.record
    if fmt == "json":
        out = {
            "type": "result",
            "sessionId": agent.session.id,
            "sessionFile": agent.session.path,
            "executionId": rec.execution_id,
            "status": rec.status,
            "terminalReason": rec.terminal_reason,
            "exitCode": rec.exit_code,
            "text": result.text,
            "stopReason": result.message.stop_reason if result.message else None,
            "usage": _usage_totals(assistants),
            "turns": rec.step_index,
        }
        if rec.error_message:
            out["errorMessage"] = rec.error_message
        if rec.limit:
            out["limit"] = rec.limit
        if result.warning:
            out["warning"] = result.warning
        sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
    elif fmt == "text" and result.text:
        sys.stdout.write(result.text.rstrip("\n") + "\n")
    if rec.status == "FAILED":
        print(f"ama: error: {rec.error_message or rec.terminal_reason}", file=sys.stderr)
    elif rec.status == "CANCELLED":
        print("ama: interrupted", file=sys.stderr)
    return rec.exit_code


__all__ = ["agent_main", "print_main"]
