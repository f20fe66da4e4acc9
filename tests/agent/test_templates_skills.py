"""Prompt templates and skills: real files in a tmp project and config dir, parsing and
validation, expansion, the system-prompt listing and the ``skill`` tool."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from ama.agent.catalog import PromptCatalog
from ama.agent.frontmatter import FrontMatterError, parse
from ama.agent.skills import LISTING_BUDGET, listing
from ama.agent.templates import expand, load_template
from ama.errors import InvalidArguments
from tests.agent.helpers import make_agent, write_script


def put(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def skill_md(name: str, description: str, body: str = "Do the thing.") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}\n"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    d = tmp_path / "ws"
    d.mkdir()
    return d


# --- front matter -------------------------------------------------------------------------


def test_front_matter_fields_lists_and_folded_text() -> None:
    doc = parse(
        "---\ndescription: >\n  two\n  lines\nargument-hint: \"[file]\"\nallowed-tools: [read, 'grep']\n"
        "# a comment\nmodel: x/y  # trailing\n---\nbody $1\n",
        "t.md",
    )
    assert doc.meta == {"description": "two lines", "argument-hint": "[file]", "allowed-tools": ["read", "grep"], "model": "x/y"}
    assert doc.body == "body $1\n" and doc.body_line == 10


@pytest.mark.parametrize(
    ("text", "line", "what"),
    [
        ("---\ndescription: x\n", 1, "never closed"),
        ("---\ndescription: x\nnot a field\n---\n", 3, "expected 'key: value'"),
        ("---\na: 1\na: 2\n---\n", 3, "duplicate key 'a'"),
        ("---\na: \"open\n---\n", 2, "unterminated"),
    ],
)
def test_malformed_front_matter_names_file_and_line(text: str, line: int, what: str) -> None:
    with pytest.raises(FrontMatterError) as e:
        parse(text, "/p/t.md")
    assert e.value.message.startswith(f"/p/t.md:{line}: ") and what in e.value.message


# --- templates ----------------------------------------------------------------------------


def test_template_arguments_substitution(tmp_path: Path) -> None:
    t = load_template(str(put(tmp_path / "r.md", "---\ndescription: d\n---\nReview $1 for $2.\nAll: $ARGUMENTS / $@ / [$3]\n")), "project")
    assert expand(t, '"src/a b.py" security') == 'Review src/a b.py for security.\nAll: "src/a b.py" security / "src/a b.py" security / []'
    plain = load_template(str(put(tmp_path / "p.md", "Summarize the repo.\n")), "user")
    assert plain.description == "Summarize the repo."
    assert expand(plain, "") == "Summarize the repo."
    assert expand(plain, "briefly") == "Summarize the repo.\n\nbriefly"  # no placeholder: appended


def test_template_discovery_precedence_and_warnings(ws: Path, ama_home: Path) -> None:
    put(ws / ".ama/prompts/review.md", "project review $ARGUMENTS\n")
    put(ws / ".claude/commands/review.md", "claude review\n")
    put(ws / ".claude/commands/fix.md", "---\ndescription: Fix it\n---\nfix $1\n")
    put(ama_home / "prompts/review.md", "user review\n")
    put(ama_home / "prompts/mine.md", "user only\n")
    put(ws / ".ama/prompts/help.md", "shadowing a built-in\n")
    put(ws / ".ama/prompts/broken.md", "---\ndescription: [x\n---\nbody\n")
    cat = PromptCatalog.load(str(ws), str(ama_home))
    by = {t.name: t for t in cat.templates}
    assert sorted(by) == ["broken", "fix", "mine", "review"]
    assert by["review"].path == str(ws / ".ama/prompts/review.md") and by["mine"].scope == "user"
    assert any("claude/commands/review.md is shadowed by" in w for w in cat.warnings)
    assert any("/help is a built-in command" in w for w in cat.warnings)
    assert cat.expand("/fix the bug") == "fix the"
    with pytest.raises(InvalidArguments, match=r"broken\.md:2: unterminated list"):
        cat.expand("/broken now")
    # not a template: unchanged; a built-in outside the UI: a clear error
    assert cat.expand("/usr/bin is slow") == "/usr/bin is slow"
    assert cat.expand("/nosuch thing") == "/nosuch thing"
    with pytest.raises(InvalidArguments, match="/model is a command of the interactive UI"):
        cat.expand("/model x")


# --- skills -------------------------------------------------------------------------------


def test_skill_discovery_validation_and_project_wins(ws: Path, ama_home: Path) -> None:
    put(ws / ".ama/skills/pdf-forms/SKILL.md", skill_md("pdf-forms", "Fill PDF forms. Use for PDF fields."))
    put(ws / ".ama/skills/pdf-forms/scripts/fill.py", "print(1)\n")
    put(ama_home / "skills/pdf-forms/SKILL.md", skill_md("pdf-forms", "the user's copy"))
    put(ws / ".claude/skills/changelog/SKILL.md", skill_md("changelog", "Write changelog entries."))
    put(ws / ".ama/skills/Bad_Name/SKILL.md", skill_md("Bad_Name", "x"))
    put(ws / ".ama/skills/other/SKILL.md", skill_md("mismatch", "x"))
    put(ws / ".ama/skills/nodesc/SKILL.md", "---\nname: nodesc\n---\nbody\n")
    put(ws / ".ama/skills/nofm/SKILL.md", "just text\n")
    cat = PromptCatalog.load(str(ws), str(ama_home))
    assert [(s.name, s.scope) for s in cat.skills] == [("pdf-forms", "project"), ("changelog", "project")]
    assert cat.skill("pdf-forms").description == "Fill PDF forms. Use for PDF fields."  # type: ignore[union-attr]
    errors = {Path(e["location"]).parent.name: e["error"] for e in cat.skill_errors}
    assert "SKILL.md:2: the name 'Bad_Name' must be lowercase" in errors["Bad_Name"]
    assert "SKILL.md:2: the name 'mismatch' differs from its folder 'other'" in errors["other"]
    assert "SKILL.md:1: missing or empty 'description'" in errors["nodesc"]
    assert "SKILL.md:1: no front matter" in errors["nofm"]
    assert any(f"{ama_home}/skills/pdf-forms/SKILL.md is shadowed by {ws}/.ama/skills/pdf-forms/SKILL.md (project wins)" in w for w in cat.warnings)
    text = cat.expand("/skill:pdf-forms fill in.pdf")
    assert text.startswith(f'<skill name="pdf-forms" location="{ws}/.ama/skills/pdf-forms/SKILL.md">')
    assert "Files: scripts/fill.py" in text and "Do the thing." in text and text.endswith("</skill>\n\nfill in.pdf")
    with pytest.raises(InvalidArguments, match=r"no skill named 'nope' \(skills: pdf-forms, changelog"):
        cat.expand("/skill:nope")
    names = [(c["name"], c["source"]) for c in cat.commands()]
    assert ("help", "builtin") in names and ("skill:pdf-forms", "skill") in names


def test_listing_has_names_and_descriptions_only_within_budget(ws: Path, ama_home: Path) -> None:
    for i in range(60):
        put(ws / f".ama/skills/s{i:02d}/SKILL.md", skill_md(f"s{i:02d}", "d" * 200, body="SECRET BODY"))
    put(ws / ".ama/skills/hidden/SKILL.md", "---\nname: hidden\ndescription: h\ndisable-model-invocation: true\n---\nx\n")
    cat = PromptCatalog.load(str(ws), str(ama_home))
    text = listing(cat.skills)
    assert len(text) <= LISTING_BUDGET + 600  # the overflow line names the rest
    assert "SECRET BODY" not in text and "hidden" not in text
    assert "- s00: " + "d" * 200 in text and "s59" in text.splitlines()[-1]


def test_prompt_with_template_and_skill_end_to_end(ws: Path, ama_home: Path, tmp_path: Path) -> None:
    """The scripted model loads a skill with the `skill` tool after a template prompt."""
    put(ws / ".ama/prompts/release.md", "---\ndescription: Cut a release\n---\nPrepare release $1.\n")
    put(ama_home / "skills/changelog/SKILL.md", skill_md("changelog", "Write changelog entries.", "Use Keep a Changelog."))
    model = write_script(
        tmp_path / "s.json",
        [{"toolCalls": [{"name": "skill", "arguments": {"name": "changelog"}}]},
         {"toolCalls": [{"name": "skill", "arguments": {"name": "nope"}}]}, {"text": "done"}],
    )

    async def go():
        agent, events = await make_agent(ws, model, session="memory")
        try:
            assert "# Skills" in agent.system_prompt and "- changelog: Write changelog entries." in agent.system_prompt
            assert "Use Keep a Changelog." not in agent.system_prompt
            return await agent.prompt("/release 1.2"), events
        finally:
            await agent.close()

    result, events = asyncio.run(go())
    assert result.text == "done"
    (start,) = [e for e in events if e["type"] == "before_agent_start"]
    assert start["prompt"] == "Prepare release 1.2."
    users = [e["message"] for e in events if e["type"] == "message_end" and e["message"]["role"] == "user"]
    assert users[0]["content"] == "Prepare release 1.2."
    ends = [e for e in events if e["type"] == "tool_execution_end"]
    assert [e["isError"] for e in ends] == [False, True]
    assert "Use Keep a Changelog." in ends[0]["result"]["content"][0]["text"]
    assert "No skill named 'nope'. Skills: changelog." in ends[1]["result"]["content"][0]["text"]


def test_no_skills_no_tool_and_no_listing(ws: Path, tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", [{"text": "hi"}])

    async def go():
        agent, _ = await make_agent(ws, model, session="memory")
        try:
            assert "skill" not in [t.name for t in agent.tools] and "# Skills" not in agent.system_prompt
        finally:
            await agent.close()

    asyncio.run(go())


def test_template_allowed_tools_never_widen_permissions(ws: Path, tmp_path: Path) -> None:
    put(ws / ".ama/prompts/ship.md", "---\nallowed-tools: [bash, write]\nmodel: other/model\n---\nShip it.\n")
    model = write_script(
        tmp_path / "s.json",
        [{"toolCalls": [{"name": "write", "arguments": {"path": "x.txt", "content": "x"}}]}, {"text": "ok"}],
    )

    async def go():
        agent, events = await make_agent(ws, model, session="memory")
        try:
            await agent.prompt("/ship")
            return agent.model.ref, events
        finally:
            await agent.close()

    ref, events = asyncio.run(go())
    (end,) = [e for e in events if e["type"] == "tool_execution_end"]
    assert end["isError"] and "requires approval" in end["result"]["content"][0]["text"]
    assert not (ws / "x.txt").exists() and ref == model  # neither the permissions nor the model changed
