"""Every configuration key ama knows: type, default, description, and what a project may set.

Config files are JSON objects; nested objects are flattened to dotted keys
(``{"sandbox": {"network": "deny"}}`` is ``sandbox.network``).  Keys whose value is a
free-form object (``providers``, ``hooks``) are listed as such and not flattened further.

``project`` says what a project-level ``.ama/config.json`` may do with a key:
``"any"`` set it; ``"no"`` never (ignored with a warning); or a callable
``(user_value, project_value) -> bool`` that accepts only values that tighten.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ama.config import external_agents as _ext


class Key:
    """One configuration key.  (A plain class, not a dataclass: every start loads this table,
    RPC's first answer included, and making a frozen dataclass costs about a millisecond.)"""

    __slots__ = ("name", "type", "default", "description", "project", "check")

    def __init__(
        self,
        name: str,
        type: str,  # "str" | "int" | "number" | "bool" | "list[str]" | "object" | one of "a|b|c"
        default: Any,
        description: str,
        project: str | Callable[[Any, Any], bool] = "no",
        #: a deeper check of a value of the right type: an error message, or None
        check: Callable[[Any], str | None] | None = None,
    ) -> None:
        self.name = name
        self.type = type
        self.default = default
        self.description = description
        self.project = project
        self.check = check

    def __repr__(self) -> str:
        return f"Key({self.name!r}, {self.type!r}, {self.default!r})"

    def choices(self) -> list[str] | None:
        return self.type.split("|") if "|" in self.type else None


def _only(value: Any) -> Callable[[Any, Any], bool]:
    return lambda _user, project: project == value


def _smaller(_user: Any, project: Any) -> bool:
    return isinstance(project, int) and (not isinstance(_user, int) or project <= _user)


def _tighter_limit(user: Any, project: Any) -> bool:
    """A lower limit than the user's, where 0 means no limit (so a project cannot set 0)."""
    if not isinstance(project, int) or isinstance(project, bool) or project <= 0:
        return False
    return not isinstance(user, int) or user == 0 or project <= user


KEYS: dict[str, Key] = {
    k.name: k
    for k in [
        Key("model", "str", None, "Default model as provider/id (e.g. anthropic/claude-sonnet-4-5).", "any"),
        Key("thinkingLevel", "off|minimal|low|medium|high|xhigh", "off", "Default thinking / reasoning level.", "any"),
        Key(
            "permissionMode",
            "plan|allowlist|default|auto-edit|auto|full-auto",
            "default",
            "Default permission mode for new sessions.",
        ),
        Key("sessionDir", "str", None, "Sessions directory (default <data dir>/sessions)."),
        Key("providers", "object", {}, "Extra model providers, pi models.json style (see docs/providers.md)."),
        Key("hooks", "object", {}, "Command hooks by event (see docs/hooks.md)."),
        Key("permissions.allow", "list[str]", [], "Rules that allow a tool call without asking, e.g. 'bash(npm test)'."),
        Key("permissions.deny", "list[str]", [], "Rules that always deny a tool call, e.g. 'read(.env)'.", "any"),
        Key("permissions.ask", "list[str]", [], "Rules that always ask before a tool call.", "any"),
        Key(
            "permissions.classifier.model",
            "str",
            None,
            "Model (provider/id) judging calls in auto mode (default: the session model family's small model).",
        ),
        Key("permissions.classifier.timeoutMs", "int", 15000, "An auto-mode classifier request slower than this asks."),
        Key("retry.maxAttempts", "int", 3, "Attempts per model request on 429/5xx/overloaded/network errors."),
        Key("retry.baseDelayMs", "int", 2000, "First retry delay; doubles per attempt (capped at 60 s)."),
        Key("retry.timeoutMs", "int", 600_000, "A model request fails with timeout (retryable) when no byte arrives for this long."),
        Key("compaction.enabled", "bool", True, "Summarize older context near the window limit and on overflow (docs/compaction.md).", "any"),
        Key("compaction.threshold", "float", 0.8, "Compact when the next request passes this fraction of the context window.", "any"),
        Key("compaction.reserveTokens", "int", 16384, "Tokens left free for the reply; compaction also starts at window minus this.", "any"),
        Key("compaction.keepRecentTokens", "int", 20000, "Newest context kept verbatim after a compaction.", "any"),
        Key("compaction.model", "str", None, "Model (provider/id) that writes compaction summaries (default: the session's).", "any"),
        Key("compaction.prune", "bool", True, "Replace old large tool results by a placeholder before compacting (tier 1).", "any"),
        Key("compaction.pruneKeepTokens", "int", 40000, "Newest context never pruned.", "any"),
        Key("compaction.pruneMinTokens", "int", 20000, "Prune only when a batch saves at least this many tokens.", "any"),
        Key("compaction.imageBudget", "int", 20, "Most images one request carries; older ones become a placeholder (0 = no limit).", "any"),
        Key("compaction.imageBudgetBytes", "int", 20971520, "Most base64 image bytes one request carries (0 = no limit).", "any"),
        Key("reminders.todo", "bool", True, "Restate the open todo items before a new prompt (ama.reminder).", "any"),
        Key("reminders.changedFiles", "bool", True, "Tell the model when files it read changed on disk since.", "any"),
        Key("reminders.contextUsage", "bool", True, "Tell the model how full the context window is (from 70 %).", "any"),
        Key("reminders.budget", "bool", True, "Tell the model how much of the run's budget is left (from 75 % used).", "any"),
        Key("reminders.backgroundJobs", "bool", True, "Tell the model when a background command exited.", "any"),
        Key("cache.ttlSeconds", "number", 300, "How long the provider keeps a prompt cache entry (for cache_miss and keep-warm)."),
        Key("cache.warm", "bool", False, "Keep the prompt cache warm while idle with minimal requests (they cost).", _only(False)),
        Key("cache.warmMax", "int", 3, "Most keep-warm requests in a row while the session is idle.", _smaller),
        Key("limits.maxTurns", "int", 0, "Stop a run after this many model calls (0 = no limit).", "any"),
        Key("limits.maxCost", "number", 0, "Stop a run once its model requests cost this many USD (0 = no limit).", "any"),
        Key("limits.maxTokens", "int", 0, "Stop a run once its model requests used this many tokens (0 = no limit).", "any"),
        Key("limits.maxWallTime", "number", 0, "Stop a run after this many seconds; it fails with timeout (0 = no limit).", "any"),
        Key("fallbackModel", "str", None, "Model (provider/id) that answers one request when the model is overloaded.", "any"),
        Key(
            "plan.unattended",
            "stop|approve",
            "stop",
            "A plan proposed with no one to answer (-p, RPC without 'plans'): stop, or approve and run it.",
            _only("stop"),
        ),
        Key("plan.model", "str", None, "Model (provider/id) used in plan mode; the previous model returns when plan mode ends.", "any"),
        Key("ui.animation", "bool", True, "Animate while the model streams; false also stops telemetry_tick events."),
        Key("ui.restoreOnCancel", "bool", True, "Esc before any reply withdraws the turn and refills the prompt."),
        Key(
            "checkpoints.mode",
            "tools|shadow-git|off",
            "tools",
            "File checkpoints for rewind (AMA_CHECKPOINTS); shadow-git by default when sandbox.bash is auto.",
            _only("off"),
        ),
        Key("checkpoints.maxFileBytes", "int", 5 * 1024 * 1024, "Files larger than this are not backed up.", _smaller),
        Key("checkpoints.keep", "int", 100, "Checkpoints older than the newest N are not offered as rewind points."),
        Key("sandbox.enabled", "auto|off", "auto", "Use the OS sandbox when available (AMA_SANDBOX=off overrides)."),
        Key("sandbox.bash", "auto|off", "off", "Run bash in the OS sandbox (bwrap / sandbox-exec only)."),
        Key("sandbox.network", "deny|allow", "deny", "Network inside the bash sandbox.", _only("deny")),
        Key("sandbox.writable", "list[str]", [], "Extra writable directories for the bash sandbox (absolute or ~/)."),
        Key("sandbox.env", "list[str]", [], "Older name of sandbox.envAllow (both are read)."),
        Key(
            "sandbox.envAllow",
            "list[str]",
            [],
            "Variables (names or globs) bash commands keep although they look like credentials.",
        ),
        Key(
            "sandbox.allowSecrets",
            "list[str]",
            [],
            "Workspace secret files (.env, ...) left readable in the sandbox: globs on the relative path or name.",
        ),
        Key("tasks.maxParallel", "int", 4, "Task sub-agents running at once; more wait their turn (docs/agents.md).", _tighter_limit),
        Key("tasks.maxDepth", "int", 1, "Levels of task sub-agents (1: a sub-agent has no task tool).", _smaller),
        Key("tasks.maxPerSession", "int", 20, "Task sub-agents one session may start (continuations do not count).", _smaller),
        Key("tasks.maxTurns", "int", 40, "Model calls per task run; a capped task ends max_turns (0 = no limit).", _tighter_limit),
        Key("tasks.maxCost", "number", 2.0, "USD per task run; a capped task ends max_turns (0 = no limit).", "any"),
        Key("tasks.maxWallTime", "number", 1800, "Seconds per task run; a capped task ends max_turns (0 = no limit).", "any"),
        Key("tasks.exploreModel", "str", None, "Model (provider/id) for the explore agent; unset: the parent's model.", "any"),
        Key(
            "sandbox.maxProcesses",
            "int",
            1024,
            "Most processes one sandboxed bash call may run (fork bombs); 0 = no limit.",
            _tighter_limit,
        ),
        Key(
            "agents.external.allow",
            "list[str]",
            _ext.DEFAULT_ALLOW,
            "External agents a task may run: claude, codex, acp:<program>, acp:* (docs/external-agents.md).",
            _ext.narrower_allow,
            _ext.check_allow,
        ),
        Key(
            "agents.external.agents",
            "object",
            {},
            "Per external agent {command, args, env, confirm} (docs/external-agents.md).",
            check=_ext.check_agents,
        ),
    ]
}

#: Keys whose values are objects kept whole (not flattened).
OBJECT_KEYS = frozenset(k for k, v in KEYS.items() if v.type == "object")
