"""The pure parts of the terminal UI: the live region's frames, fuzzy file matching, paste
placeholders, @file attachment, the Shift-Tab cycle, diffs, the rewind labels and options."""

from __future__ import annotations

import io
from pathlib import Path

from ama.cli.render import Renderer
from ama.cli.ui.completion import Pastes, attach_mentions, fuzzy_score
from ama.cli.ui.diffview import compact_diff, stat
from ama.cli.ui.live import LiveRegion, crop
from ama.cli.ui.rewind_panel import files_label, options_for, result_line
from ama.permission_modes import next_mode


def plain(text: str, code: str) -> str:
    return text


def test_live_region_erases_only_its_own_rows_and_prints_above_once() -> None:
    out = io.StringIO()
    live = LiveRegion(out)
    live.draw(["partial", "spinner"])
    assert out.getvalue() == "partial\nspinner" and live.rows == 2
    out.seek(0)
    out.truncate()
    live.draw(["partial more", "spinner"], above="finished block\n")
    # back to the region's first row, clear below, the finished text, the new rows
    assert out.getvalue() == "\r\x1b[1A\x1b[Jfinished block\npartial more\nspinner"
    out.seek(0)
    out.truncate()
    live.clear()
    assert out.getvalue() == "\r\x1b[1A\x1b[J" and live.rows == 0
    live.draw([f"row {i}" for i in range(500)])
    assert live.rows == live.size()[1] - 2  # never taller than the screen


def test_crop_keeps_colour_codes_and_cuts_visible_cells() -> None:
    assert crop("\x1b[31mabcdef\x1b[0m", 4) == "\x1b[31mabc\x1b[0m…\x1b[0m"
    assert crop("short", 10) == "short"


def test_renderer_without_colour_prints_plain_blocks_and_no_live_region() -> None:
    out = io.StringIO()
    r = Renderer(out, color=False)
    assert r.live is None
    for d in ["Hello **wor", "ld**.\n\nNext"]:
        r.handle({"type": "message_update", "assistantMessageEvent": {"type": "text_delta", "delta": d}})
    assert out.getvalue() == "Hello **world**.\n\n"
    r.handle({"type": "message_end", "message": {"role": "assistant"}})
    assert out.getvalue().endswith("Next\n")


def test_fuzzy_score_prefers_file_names_and_requires_order() -> None:
    files = ["src/ama/cli/render.py", "docs/rewind.md", "src/ama/agent/session_rewind.py", "README.md"]
    ranked = sorted((s, f) for f in files if (s := fuzzy_score("rewind", f)) is not None)
    assert [f for _, f in ranked] == ["docs/rewind.md", "src/ama/agent/session_rewind.py"]
    assert fuzzy_score("rdr", "src/ama/cli/render.py") is not None
    assert fuzzy_score("zz", "src/ama/cli/render.py") is None


def test_pastes_collapse_large_text_and_expand_on_submit() -> None:
    p = Pastes()
    assert p.insert("one line") == "one line"
    big = "\n".join(f"line {i}" for i in range(20))
    ph = p.insert(big)
    assert ph == "[Pasted text #1 +20 lines]"
    assert p.expand(f"see {ph} please") == f"see {big} please"
    assert p.expand("[Pasted text #1 +20 lines]") == "[Pasted text #1 +20 lines]"  # used once


def test_attach_mentions_attaches_project_text_files_only(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("print(1)\n")
    (tmp_path / "bin").write_bytes(b"\0\1\2")
    outside = tmp_path.parent / "outside.txt"
    outside.write_text("secret")
    text, attached = attach_mentions("look at @a.py, @bin and @../outside.txt and @missing", str(tmp_path))
    assert attached == ["a.py"]
    assert text.endswith('<file path="a.py">\nprint(1)\n</file>')
    assert attach_mentions("mail me@a.py", str(tmp_path)) == ("mail me@a.py", [])


def test_shift_tab_cycle() -> None:
    assert next_mode("default", "default") == "auto-edit"
    assert next_mode("auto-edit", "default") == "auto"
    assert next_mode("auto", "default") == "plan"
    assert next_mode("plan", "default") == "default"
    assert next_mode("plan", "full-auto") == "full-auto"  # the starting mode joins the cycle
    assert next_mode("full-auto", "full-auto") == "default"


def test_compact_diff_and_stat() -> None:
    diff = "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-one\n+two\n keep\n"
    assert stat(diff) == (1, 1)
    assert compact_diff(diff, plain) == ["    +1 −1", "    -one", "    +two"]
    long = "".join(f"+l{i}\n" for i in range(20))
    rows = compact_diff(long, plain)
    assert rows[-1] == "    … 8 more changed lines" and len(rows) == 14


def test_rewind_labels_and_options() -> None:
    code = {"restored": ["a"], "deleted": [], "conflicts": [], "skipped": [], "insertions": 2, "deletions": 3}
    assert files_label(code) == "1 file +2 −3"
    assert files_label(None) == "no code changes"
    unchanged = {**code, "restored": []}
    assert files_label({**unchanged, "conflicts": ["b"]}) == "no code changes · 1 conflict"
    assert options_for(code) == ["both", "conversation", "code", "summarize_from", "summarize_up_to", "cancel"]
    assert options_for(unchanged) == ["conversation", "summarize_from", "summarize_up_to", "cancel"]
    skipped = {**code, "skipped": [{"path": "big.bin", "reason": "too_large"}], "conflicts": ["c.txt"]}
    assert result_line({"code": skipped}) == "restored 1 file, skipped 2 (big.bin: too_large; c.txt: changed outside ama)"


def test_glyphs_fall_back_to_ascii_when_the_encoding_cannot_show_them() -> None:
    from ama.cli.ui.glyphs import ASCII, UNICODE, pick

    assert pick("utf-8") is UNICODE and pick("UTF8") is UNICODE
    assert pick("ascii") is ASCII and pick("ISO-8859-1") is ASCII and pick(None) is ASCII
    assert all(c.isascii() for c in ASCII.bar + ASCII.pointer + ASCII.call + ASCII.result + ASCII.spinner + ASCII.minus)


def test_the_footer_shows_the_rates_once_a_reply_streamed() -> None:
    from types import SimpleNamespace

    from ama.cli.ui.status import footer

    class Meter:
        def __init__(self, snap: dict) -> None:
            self.snap = snap

        def snapshot(self) -> dict:
            return self.snap

    agent = SimpleNamespace(model=SimpleNamespace(ref="p/m"), permissions=SimpleNamespace(mode="auto"), telemetry=Meter({}))
    assert footer(agent, 12.4, 0.5) == "p/m · permissions auto · context 12% · $0.5000"
    agent.telemetry = Meter({"last": {"ttftMs": 420, "tps": 48.2}, "avgTps": 51.0})
    assert footer(agent, None, None) == "p/m · permissions auto · TTFT 0.42s · 48 tok/s · avg 51 tok/s"


def test_a_long_model_ref_is_shortened_so_the_mode_stays_on_screen() -> None:
    from types import SimpleNamespace

    from ama.cli.ui.status import footer, short_ref

    assert short_ref("anthropic/claude-sonnet-4-5") == "anthropic/claude-sonnet-4-5"
    long = "scripted//tmp/pytest-of-root/pytest-123/test_something_long0/ws/p.json"
    assert short_ref(long) == "scripted/…" + long[-30:] and len(short_ref(long)) == 40
    agent = SimpleNamespace(model=SimpleNamespace(ref=long), permissions=SimpleNamespace(mode="plan"))
    assert footer(agent, None, None).startswith("scripted/…") and "· permissions plan" in footer(agent, None, None)
