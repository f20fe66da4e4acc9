"""The rewind panel (seed 004 §4; docs/rewind.md): go back to before one of your messages.

1. The list: the user messages of the active path, oldest first, the last one highlighted;
   the highlighted row shows ``N files +x −y`` or ``no code changes`` (a dry run of the
   code rewind, done once per row).
2. The panel (left bar): the message and its time; the preview (``will restore N files
   +x −y`` / ``code unchanged``, then the conflicts and skipped files); when git HEAD moved
   since the checkpoint, a hint with ``git log --oneline REC..HEAD`` and
   ``git reset --soft REC`` — printed, never run.
3. The options: restore code and conversation / conversation only / code only (these two
   only when the code would change) / summarize from here / summarize up to here (both take
   optional instructions) / cancel.
4. The result: ``restored N files, skipped M (reasons)``; the conversation options put the
   message back in the input.
"""

from __future__ import annotations

from typing import Any

from ama.cli.ui.glyphs import G
from ama.cli.util import local_time

BAR = G.bar

OPTIONS = {
    "both": "restore code and conversation",
    "conversation": "restore conversation only (files stay)",
    "code": "restore code only (the conversation stays)",
    "summarize_from": "summarize from here (go back; the later part becomes a summary)",
    "summarize_up_to": "summarize up to here (the earlier part becomes a summary; stay at the end)",
    "cancel": "cancel",
}


def files_label(code: dict[str, Any] | None) -> str:
    """``N files +x −y`` / ``no code changes`` (`` · K conflicts``) for a dry run's ``code``."""
    if not code:
        return "no code changes"
    n = len(code["restored"]) + len(code["deleted"])
    label = f"{n} file{'s' if n != 1 else ''} +{code['insertions']} {G.minus}{code['deletions']}" if n else "no code changes"
    k = len(code["conflicts"])
    return label + (f" · {k} conflict{'s' if k != 1 else ''}" if k else "")


def options_for(code: dict[str, Any] | None) -> list[str]:
    changes = bool(code and (code["restored"] or code["deleted"] or code["conflicts"]))
    keys = ["both", "conversation", "code"] if changes else ["conversation"]
    return keys + ["summarize_from", "summarize_up_to", "cancel"]


def panel_lines(n: int, point: dict[str, Any], dry: dict[str, Any], style: Any) -> list[str]:
    bar = style(BAR, "36")
    out = [bar + style(f"rewind to before message #{n} · {local_time(point.get('timestamp') or '', seconds=False)}", "1")]
    text = (point.get("text") or "").strip().splitlines() or [""]
    out += [bar + style("> ", "2") + line for line in text[:8]]
    if len(text) > 8:
        out.append(bar + style(f"  … (+{len(text) - 8} lines)", "2"))
    out.append(bar)
    code = dry.get("code")
    if code is None:
        out.append(bar + "code unchanged (no file checkpoint for this message)")
    else:
        n = len(code["restored"]) + len(code["deleted"])
        files = f"{n} file{'s' if n != 1 else ''} +{code['insertions']} {G.minus}{code['deletions']}"
        out.append(bar + (f"will restore {files}" if n else "code unchanged"))
        for c in code.get("conflicts", []):
            out.append(bar + style(f"conflict: {c} changed outside ama; left alone", "33"))
        for s in code.get("skipped", []):
            out.append(bar + style(f"skipped: {s['path']} ({s.get('reason', '')})", "33"))
    hint = dry.get("gitHint")
    if hint:
        rec, cur = hint["recordedHead"][:12], hint["currentHead"][:12]
        out.append(bar + style(f"git HEAD moved since then ({rec} → {cur}); ama leaves git alone. To see or undo it:", "33"))
        out.append(bar + f"  git log --oneline {rec}..HEAD")
        out.append(bar + f"  git reset --soft {rec}")
    return out


def result_line(res: dict[str, Any]) -> str:
    code = res.get("code")
    if not code:
        return ""
    skipped = [f"{s['path']}: {s.get('reason', '')}" for s in code.get("skipped", [])]
    skipped += [f"{c}: changed outside ama" for c in code.get("conflicts", [])]
    n = len(code["restored"]) + len(code["deleted"])
    line = f"restored {n} file{'s' if n != 1 else ''}"
    if skipped:
        line += f", skipped {len(skipped)} ({'; '.join(skipped)})"
    return line


async def rewind_panel(app: Any) -> None:
    """The whole flow, started by ``/rewind`` without arguments or by idle double-Esc."""
    a = app.agent
    r = app.renderer
    ui = app.ui
    points = a.rewind_points()
    if not points:
        r.line("Nothing to rewind to yet.")
        return
    dry_runs: dict[int, dict[str, Any]] = {}

    async def dry(i: int) -> dict[str, Any]:
        if i not in dry_runs:
            p = points[i]
            if p["hasCheckpoint"]:
                dry_runs[i] = await a.rewind(p["entryId"], "code", dry_run=True)
            else:
                dry_runs[i] = {}
        return dry_runs[i]

    async def detail(i: int) -> str:
        return files_label((await dry(i)).get("code"))

    items = [f"#{n} {local_time(p['timestamp'] or '', seconds=False)}  {' '.join(p['text'].split())[:70]}" for n, p in enumerate(points, 1)]
    i = await ui.pick(items, default=len(points) - 1, title="Rewind to before which message?", detail=detail)
    if i is None:
        r.line(r.style("rewind cancelled", "2"))
        return
    point = points[i]
    info = await dry(i)
    for line in panel_lines(i + 1, point, info, r.style):
        r.line(line)
    keys = options_for(info.get("code"))
    choice = await ui.pick([OPTIONS[k] for k in keys], default=0, title="")
    key = keys[choice] if choice is not None else "cancel"
    if key == "cancel":
        r.line(r.style("rewind cancelled", "2"))
        return
    r.line(r.style(BAR, "36") + OPTIONS[key])
    if key in ("summarize_from", "summarize_up_to"):
        instructions = (await ui.ask_line("  instructions for the summary (Enter for none): ") or "").strip() or None
        r.line(r.style("summarizing…", "2"))
        if key == "summarize_from":
            res = await a.summarize_from(point["entryId"], instructions)
            app.draft = res["draft"]["text"]
            r.line(f"back to before message #{i + 1}; the later part is kept as a summary; its text is in the input")
        else:
            await a.summarize_up_to(point["entryId"], instructions)
            r.line(f"summarized the conversation before message #{i + 1}; the later messages stay as they were")
        return
    res = await a.rewind(point["entryId"], key)
    line = result_line(res)
    if line:
        r.line(line)
    if "conversation" in res:
        app.draft = res["conversation"]["draft"]["text"]
        r.line(f"back to before message #{i + 1}; its text is in the input")
