"""The decision pipeline: one pure function from (tool call, context) to a ``Decision``.

Order (first step that decides wins; docs/permissions.md "Decision order"):

 1. deny rules                                   -> deny     (rule)
 2. PreToolUse hook "deny"                       -> deny     (hook)
 3. plan mode and the call is not read-only      -> deny     (mode)
 4. ask rules                                    -> ask      (rule)
 5. bash: dangerous-command table, unreadable or
    too deeply nested                            -> ask      (dangerous)   unless an allow
 6. secret path (path argument or command text)  -> ask      (secret)      rule / session
 7. write to .ama/, .git/hooks, .git/config
    (not in full-auto)                           -> ask      (protected)   allow names it
 8. PreToolUse hook "ask"                        -> ask      (hook)
 9. PreToolUse hook "allow"                      -> allow    (hook)
10. allow rules                                  -> allow    (rule)
11. "allow for session" memory                   -> allow    (session)
12. the mode's own answer; in default / auto-edit a bash "ask" becomes allow when the
    command runs in the sandbox and that sandbox denies network      (mode / sandbox);
    in auto the rule and static layers of ``_auto`` (rule / static), else a pending ask
    for the classifier (``PermissionSession.settle``)
13. unattended: any "ask" left                   -> deny     (unattended)   (not a pending
    one: it is denied after the classifier, if the classifier asks)

In auto mode every decision carries ``Decision.auto``: steps 1-11 are its rule layer.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from ama.permissions import _auto
from ama.permissions._dangerous import Finding, describe, find_dangers
from ama.permissions._rules import Rule, normalize_command
from ama.permissions._secrets import mentions_secret, secret_path
from ama.permissions._shell import Analysis, Command, analyze
from ama.permissions._types import AutoDecision, Decision, HookVerdict, PermissionContext, Source


@dataclass(frozen=True)
class ToolSpec:
    kind: str  # "read" | "write" | "exec" | "internal"
    path_arg: str | None = None
    default_path: str | None = None  # when the path argument is missing
    command_arg: str | None = None
    read_only_action: str | None = None  # "internal" tools: read-only when args["action"] is this


#: What the pipeline knows of each built-in tool; any other tool is "read" when the caller
#: says it is read-only, else "other".
TOOLS: dict[str, ToolSpec] = {
    "read": ToolSpec("read", path_arg="path"),
    "ls": ToolSpec("read", path_arg="path", default_path="."),
    "find": ToolSpec("read", path_arg="path", default_path="."),
    "grep": ToolSpec("read", path_arg="path", default_path="."),
    "write": ToolSpec("write", path_arg="path"),
    "edit": ToolSpec("write", path_arg="path"),
    "bash": ToolSpec("exec", command_arg="command"),
    "todo": ToolSpec("internal", read_only_action="get"),
}
READ_ONLY_TOOLS = ("read", "ls", "find", "grep", "todo(get)")
PROTECTED = (".ama", ".git/hooks", ".git/config")  # workspace paths later runs execute from

# fmt: off
_TWO_WORD = frozenset({
    "git", "npm", "pnpm", "yarn", "bun", "npx", "cargo", "go", "docker", "kubectl", "pip", "pip3", "uv",
    "poetry", "make", "dotnet", "gradle", "mvn", "brew", "apt", "apt-get", "systemctl", "gh",
    "terraform", "helm", "rustup", "deno", "mix", "bundle", "composer",
})
# fmt: on


@dataclass(frozen=True)
class _Call:
    tool: str
    kind: str  # read | write | exec | internal | other
    read_only: bool
    path: str | None = None
    command: str | None = None
    analysis: Analysis | None = None
    sandboxed: bool = False
    sandbox_off: bool = False


def resolve_path(value: str, *, cwd: str, home: str) -> str:
    """Absolute and normalized, as the tools resolve it (``~`` and ``~user`` expanded)."""
    if value == "~" or value.startswith("~/"):
        value = home + value[1:]
    elif value.startswith("~"):  # ~user: assume a sibling of our home (no passwd lookup: pure)
        name, _, rest = value[1:].partition("/")
        user_home = (
            home
            if name == posixpath.basename(home.rstrip("/"))
            else posixpath.join(posixpath.dirname(home), name)
        )
        value = user_home + ("/" + rest if rest else "")
    path = posixpath.normpath(posixpath.join(cwd, value))
    return "/" + path.lstrip("/") if path.startswith("//") else path


def _inside(path: str, root: str) -> bool:
    root = root.rstrip("/")
    return not root or path == root or path.startswith(root + "/")


def _external_agent(agent: Any) -> bool:
    return isinstance(agent, str) and (agent.startswith("acp:") or agent in ("claude", "codex"))


def _classify(tool: str, args: dict[str, Any], ctx: PermissionContext, read_only: bool | None) -> _Call:
    tool = tool.lower()  # rules are case-insensitive
    spec = TOOLS.get(tool)
    if tool == "task" and _external_agent(args.get("agent")):
        # another agent program (docs/external-agents.md) acts outside ama's tools and
        # sandbox: starting one asks like bash does, and plan mode refuses it
        return _Call(tool, "other", False)
    if spec is None:
        ro = bool(read_only)
        return _Call(tool, "read" if ro else "other", ro)
    if spec.kind == "exec":
        command = args.get(spec.command_arg or "command")
        command = command if isinstance(command, str) else ""
        active = ctx.sandbox is not None and bool(ctx.sandbox.active)
        off = args.get("sandbox") is False
        return _Call(tool, "exec", False, command=command, analysis=analyze(command),
                     sandboxed=active and not off, sandbox_off=active and off)  # fmt: skip
    path = None
    if spec.path_arg:
        value = args.get(spec.path_arg, spec.default_path)
        if isinstance(value, str) and value:
            path = resolve_path(value, cwd=ctx.cwd, home=ctx.home)
    if spec.kind == "internal":
        return _Call(tool, "internal", args.get("action") == spec.read_only_action, path)
    return _Call(tool, spec.kind, spec.kind == "read", path)


# --- rule matching ----------------------------------------------------------------------


def _forms(cmd: Command) -> list[str]:
    forms = [cmd.text, cmd.inner_text]
    if cmd.inner:
        forms.append(" ".join([cmd.name, *cmd.inner[1:]]))
    return forms


def _hits(rule: Rule, call: _Call, ctx: PermissionContext) -> bool:
    """For deny / ask: the rule matches the call or any part of its command."""
    if not rule.applies_to(call.tool):
        return False
    if rule.kind == "any":
        return True
    if call.kind != "exec":
        return rule.matches_path(call.path, cwd=ctx.cwd, home=ctx.home)
    assert call.command is not None and call.analysis is not None
    if rule.matches_command(call.command):
        return True
    return any(rule.matches_command(form) for cmd in call.analysis.commands for form in _forms(cmd))


def _needs_cover(cmd: Command) -> bool:
    return not cmd.transparent and bool(cmd.inner or cmd.redirects)


def _covering(rules: list[Rule], call: _Call, ctx: PermissionContext) -> Rule | None:
    """For allow: a rule that covers the whole call (for bash: every command it runs)."""
    rules = [r for r in rules if r.applies_to(call.tool)]
    if call.kind != "exec":
        return next((r for r in rules if r.matches_path(call.path, cwd=ctx.cwd, home=ctx.home)), None)
    assert call.command is not None and call.analysis is not None
    for r in rules:
        if r.kind == "any" or (r.kind == "exact" and r.matches_command(call.command)):
            return r
    if not call.analysis.ok:
        return None
    first: Rule | None = None
    for cmd in call.analysis.commands:
        if not _needs_cover(cmd):
            continue
        hit = next((r for r in rules if r.matches_command(cmd.text)), None)
        if hit is None:
            return None
        first = first or hit
    return first


@lru_cache(maxsize=256)
def _names_danger(rule: Rule, cwd: str, home: str) -> bool:
    if rule.kind not in ("exact", "prefix", "glob"):
        return False
    return bool(
        find_dangers(analyze(rule.literal if rule.kind == "glob" else rule.pattern), cwd=cwd, home=home)
    )


def _names_secret(rule: Rule, ctx: PermissionContext) -> bool:
    if rule.kind == "any":
        return False
    text = rule.absolute_pattern(cwd=ctx.cwd, home=ctx.home) if rule.kind == "path" else rule.pattern
    return mentions_secret(text, home=ctx.home, auth_dirs=ctx.auth_dirs, cwd=ctx.cwd) is not None


def _named(
    rules: list[Rule], call: _Call, ctx: PermissionContext, parts: list[int | None], names
) -> Rule | None:
    """An allow rule that names this danger / secret and covers the commands ``parts`` point at
    (None: the whole text, which only an exact rule covers)."""
    naming = [r for r in rules if r.applies_to(call.tool) and names(r)]
    if call.kind != "exec":
        return next((r for r in naming if r.matches_path(call.path, cwd=ctx.cwd, home=ctx.home)), None)
    assert call.command is not None and call.analysis is not None
    exact = next((r for r in naming if r.kind == "exact" and r.matches_command(call.command)), None)
    if exact is not None or None in parts:
        return exact
    first: Rule | None = None
    for index in parts:
        cmd = call.analysis.commands[index]  # type: ignore[index]
        r = next((r for r in naming if any(r.matches_command(f) for f in _forms(cmd))), None)
        if r is None:
            return None
        first = first or r
    return first


# --- what "allow for session" remembers ---------------------------------------------------


def _prefix_rule(cmd: Command) -> Rule:
    argv = cmd.argv
    if cmd.wrappers or len(cmd.inner) != len(argv) or cmd.redirects and not argv:
        return Rule("bash", "exact", normalize_command(cmd.text))
    words = argv[:1]
    name = cmd.name
    if name.startswith("python") and argv[1:2] == ["-m"] and len(argv) > 2:
        words = argv[:3]
    elif name in _TWO_WORD and len(argv) > 1 and not argv[1].startswith("-"):
        words = argv[:2]
        if (
            name in ("npm", "pnpm", "yarn", "bun")
            and argv[1] in ("run", "run-script", "exec")
            and len(argv) > 2
        ):
            words = argv[:3]
    return Rule("bash", "prefix", normalize_command(" ".join(words)))


def _session_rules(call: _Call, ctx: PermissionContext, *, exact: bool = False) -> tuple[Rule, ...]:
    if call.kind == "exec":
        assert call.command is not None and call.analysis is not None
        if exact or not call.analysis.ok:
            return (Rule("bash", "exact", normalize_command(call.command)),)
        rules = [_prefix_rule(c) for c in call.analysis.commands if _needs_cover(c)]
        return tuple(dict.fromkeys(rules)) or (Rule("bash", "exact", normalize_command(call.command)),)
    family = {"read": "read", "write": "edit"}.get(call.kind)
    if family and call.path:
        if not exact and call.kind == "write" and _inside(call.path, ctx.cwd):
            return (Rule(family, "path", ctx.cwd.rstrip("/") + "/**"),)
        return (Rule(family, "path", call.path),)
    if call.kind == "internal":
        return ()
    return (Rule(call.tool),)


# --- the pipeline -----------------------------------------------------------------------


def _secret(call: _Call, ctx: PermissionContext) -> tuple[str, list[int | None]] | None:
    """The secret a call touches and which commands name it (None = only the whole text)."""
    home, auth_dirs = ctx.home, ctx.auth_dirs
    if call.kind in ("read", "write"):
        label = secret_path(call.path, home=home, auth_dirs=auth_dirs) if call.path else None
        return (label, []) if label else None
    if call.kind != "exec":
        return None
    assert call.command is not None and call.analysis is not None
    parts: list[int | None] = []
    label = None
    for i, cmd in enumerate(call.analysis.commands):
        hit = mentions_secret(" ".join(cmd.words()), cwd=ctx.cwd, home=home, auth_dirs=auth_dirs)
        if hit:
            label, parts = label or hit, [*parts, i]
    whole = mentions_secret(call.command, cwd=ctx.cwd, home=home, auth_dirs=auth_dirs)
    if whole and not parts:
        return whole, [None]
    return (label, parts) if label else None


def _protected(call: _Call, ctx: PermissionContext) -> str | None:
    if call.kind != "write" or not call.path or ctx.mode in ("full-auto", "plan"):
        return None
    for name in PROTECTED:
        p = posixpath.join(ctx.cwd, name)
        if call.path == p or call.path.startswith(p + "/"):
            return name
    return None


def decide(
    tool_name: str,
    args: dict[str, Any] | None,
    ctx: PermissionContext,
    *,
    read_only: bool | None = None,
    hook: HookVerdict | None = None,
) -> Decision:
    """Decide one tool call (see the module docstring for the order).

    ``read_only`` is consulted only for tools the pipeline does not know (``TOOLS``);
    ``hook`` is the aggregated PreToolUse outcome, if any hook ran.
    """
    call = _classify(tool_name, args or {}, ctx, read_only)
    decision = _decide(call, ctx, hook)
    if ctx.mode == "auto" and decision.auto is None and not decision.pending:
        decision = replace(decision, auto=AutoDecision("rule", decision.action, decision.reason))
    if decision.action == "ask" and ctx.unattended and not decision.pending:
        return unattended_deny(call.tool, decision)
    return decision


def unattended_deny(tool: str, decision: Decision) -> Decision:
    """The deny an "ask" becomes when nobody can answer it (the model sees the reason)."""
    return Decision(
        "deny",
        f"`{tool.lower()}` requires approval ({decision.reason.rstrip('.')}), which is unavailable in "
        "non-interactive mode; the call was not run. Continue without it, or tell the user which "
        "permission (a permissions.allow rule or --permission-mode) would let it run.",
        "unattended",
        decision.rule,
        decision.sandboxed,
        auto=decision.auto,
    )


def _decide(call: _Call, ctx: PermissionContext, hook: HookVerdict | None) -> Decision:
    def make(action, reason: str, source: Source, rule: Rule | None = None, session=()) -> Decision:
        return Decision(action, reason, source, str(rule) if rule else None, call.sandboxed, tuple(session))

    tool = call.tool
    raw = getattr(hook, "decision", None) if hook is not None else None
    verdict = {"block": "deny", "approve": "allow"}.get(raw, raw) if isinstance(raw, str) else None
    hook_reason = (getattr(hook, "reason", "") or "").strip()
    allow = list(ctx.rules.allow) + sorted(ctx.session_allows, key=str)

    # 1-3: denials
    r = next((r for r in ctx.rules.deny if _hits(r, call, ctx)), None)
    if r is not None:
        return make("deny", f"Permission denied by the rule `{r}` (permissions.deny).", "rule", r)
    if verdict == "deny":
        return make(
            "deny", "Blocked by a PreToolUse hook" + (f": {hook_reason}" if hook_reason else "."), "hook"
        )
    if ctx.mode == "plan" and not call.read_only:
        return make(
            "deny",
            f"ama is in plan mode: only read-only tools ({', '.join(READ_ONLY_TOOLS)}) may run, so `{tool}` "
            "was not run. Keep investigating with read-only tools and present your plan; the user switches "
            "modes to carry it out.",
            "mode",
        )

    # 4-8: reasons to ask that outrank allow rules
    r = next((r for r in ctx.rules.ask if _hits(r, call, ctx)), None)
    if r is not None:
        return make(
            "ask",
            f"The rule `{r}` (permissions.ask) requires approval.",
            "rule",
            r,
            _session_rules(call, ctx),
        )
    if call.kind == "exec":
        assert call.analysis is not None
        findings: list[Finding] = find_dangers(call.analysis, cwd=ctx.cwd, home=ctx.home)
        parts = [f.command for f in findings]
        if (
            findings
            and _named(allow, call, ctx, parts, lambda r: _names_danger(r, ctx.cwd, ctx.home)) is None
        ):
            return make(
                "ask",
                f"Dangerous command: {describe(findings, call.analysis)}. It needs approval in every mode.",
                "dangerous",
                session=_session_rules(call, ctx, exact=True),
            )
    secret = _secret(call, ctx)
    if secret is not None:
        label, parts = secret
        if _named(allow, call, ctx, parts, lambda r: _names_secret(r, ctx)) is None:
            what = "The command mentions" if call.kind == "exec" else f"`{tool}` touches"
            return make(
                "ask",
                f"{what} {label}, a secret path (credentials); it needs approval.",
                "secret",
                session=_session_rules(call, ctx, exact=True),
            )
    protected = _protected(call, ctx)
    if protected is not None:

        def names_protected(r: Rule) -> bool:
            return r.kind == "path" and protected in r.absolute_pattern(cwd=ctx.cwd, home=ctx.home)

        if _named(allow, call, ctx, [], names_protected) is None:
            return make(
                "ask",
                f"`{tool}` writes {protected} in the workspace (hooks and config there run commands later); "
                "it needs approval.",
                "protected",
                session=_session_rules(call, ctx, exact=True),
            )
    if verdict == "ask":
        reason = "A PreToolUse hook asks for approval" + (f": {hook_reason}" if hook_reason else ".")
        return make("ask", reason, "hook", session=_session_rules(call, ctx))

    # 9-11: reasons to allow
    if verdict == "allow":
        return make(
            "allow", "Allowed by a PreToolUse hook" + (f": {hook_reason}" if hook_reason else "."), "hook"
        )
    r = _covering(list(ctx.rules.allow), call, ctx)
    if r is not None:
        return make("allow", f"Allowed by the rule `{r}` (permissions.allow).", "rule", r)
    r = _covering(allow, call, ctx)
    if r is not None:
        return make("allow", f"Allowed for this session (`{r}`).", "session", r)

    # 12: the mode
    if ctx.mode == "auto":
        return _auto.judge(call, ctx, make, _session_rules(call, ctx))
    return _by_mode(call, ctx, make)


def _by_mode(call: _Call, ctx: PermissionContext, make) -> Decision:
    mode, tool = ctx.mode, call.tool
    ask_session = _session_rules(call, ctx)
    if mode == "full-auto" or call.kind == "internal" or (mode == "plan" and call.read_only):
        return make("allow", f"Allowed in {mode} mode.", "mode")
    if mode == "allowlist":
        return make(
            "ask", f"allowlist mode: `{tool}` matches no permissions.allow rule.", "mode", session=ask_session
        )
    if call.kind == "read":
        return make("allow", f"Read-only tools run without asking in {mode} mode.", "mode")
    if call.kind == "write":
        if mode == "auto-edit" and call.path and _inside(call.path, ctx.cwd):
            return make("allow", "auto-edit mode: edits inside the workspace run without asking.", "mode")
        where = " outside the workspace" if mode == "auto-edit" else ""
        return make(
            "ask", f"{mode} mode asks before `{tool}` changes files{where}.", "mode", session=ask_session
        )
    if call.kind == "exec":
        assert call.analysis is not None
        if call.sandbox_off:
            return make(
                "ask",
                "The command asks to run outside the OS sandbox (sandbox: false), which needs approval.",
                "mode",
                session=ask_session,
            )
        if call.sandboxed and ctx.sandbox is not None and ctx.sandbox.isolates_network and call.analysis.ok:
            return make(
                "allow",
                "Runs in the OS sandbox (writes limited to the workspace and temp directories, no network).",
                "sandbox",
            )
        note = (
            " (the sandbox allows network, so sandboxed commands are not auto-approved)"
            if call.sandboxed
            else ""
        )
        return make("ask", f"{mode} mode asks before running commands{note}.", "mode", session=ask_session)
    return make("ask", f"{mode} mode asks before running `{tool}`.", "mode", session=ask_session)
