"""The one catalog of slash commands: the interactive UI runs them (``cli/slash.py`` maps
each name to its handler), ``/help`` prints them, and RPC ``get_commands`` lists them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CommandSpec:
    name: str
    #: the arguments as ``/help`` shows them ("" for none)
    args: str
    description: str
    aliases: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)


COMMANDS: tuple[CommandSpec, ...] = (
    CommandSpec("help", "", "this help"),
    CommandSpec("model", "[PROVIDER/ID]", "show or switch the model (no argument: pick one)"),
    CommandSpec("thinking", "[LEVEL]", "show or set the thinking level (off minimal low medium high xhigh)"),
    CommandSpec("resume", "[ID]", "switch to another session (no argument: list this directory's sessions)"),
    CommandSpec("tree", "[ENTRY]", "show the session tree; with an entry id, move there"),
    CommandSpec("rewind", "[N [MODE]]", "go back to before user message N (both | conversation | code)"),
    CommandSpec("plan", "[approve|fresh|compact [MODE] | revise TEXT | reject | off]", "plan mode: enter it, or answer the proposed plan"),
    CommandSpec("name", "NAME", "name this session"),
    CommandSpec("session", "", "show this session's file, counts and usage"),
    CommandSpec("tasks", "[ID | stop ID]", "list this session's sub-agent tasks, open one read-only, or stop one"),
    CommandSpec("clear", "", "start a new session", aliases=("new",)),
    CommandSpec("fork", "[ENTRY]", "copy this conversation into a new session and continue there"),
    CommandSpec("archive", "[ID]", "archive this session (then start a new one) or session ID"),
    CommandSpec("search", "TEXT", "search this workspace's sessions; choose a hit to resume it"),
    CommandSpec("export", "[md|json|jsonl] [FILE]", "write this session to a new file"),
    CommandSpec("cost", "", "tokens, cost and context use of this session"),
    CommandSpec("compact", "[FOCUS]", "summarize the older part of the conversation now"),
    CommandSpec("context", "", "how full the context is, and the summary of the latest compaction"),
    CommandSpec("quit", "", "exit (also Ctrl-D, or Ctrl-C twice)", aliases=("exit",)),
)


def all_names() -> list[str]:
    """Every name a user may type, aliases included, in catalog order."""
    return [n for c in COMMANDS for n in c.names]


def find(name: str) -> CommandSpec | None:
    return next((c for c in COMMANDS if name in c.names), None)


def help_lines() -> list[str]:
    out = []
    for c in COMMANDS:
        usage = f"/{c.name}" + (f" {c.args}" if c.args else "")
        out.append(f"  {usage:<19} {c.description}")
    return out
