"""Permission modes, rules, the dangerous-command table, secret paths and the decision pipeline.

``decide(tool, args, ctx)`` is one pure function over plain data (``PermissionContext``);
``PermissionSession`` wraps it with the session's "allow for session" memory.  The only
knowledge of ``ama.sandbox`` is the ``SandboxStatus`` protocol (``active``,
``isolates_network``).  See docs/permissions.md.

The names load on first use (PEP 562): importing ``Answer`` or ``PermissionSession`` does not
load the decision pipeline, the dangerous-command table or the sandbox probe, which an RPC or
ACP start-up does not need before the first tool call.
"""

from importlib import import_module as _import_module
from typing import TYPE_CHECKING as _TYPE_CHECKING

if _TYPE_CHECKING:
    from ama.permissions._classifier import SYSTEM_PROMPT as CLASSIFIER_PROMPT
    from ama.permissions._classifier import (
        Classifier,
        ClassifyRequest,
        Verdict,
        call_key,
        os_sandbox_line,
        parse_answer,
    )
    from ama.permissions._dangerous import DANGEROUS, Danger, Finding, find_dangers
    from ama.permissions._pipeline import READ_ONLY_TOOLS, TOOLS, ToolSpec, decide, resolve_path
    from ama.permissions._rules import Rule, Rules
    from ama.permissions._secrets import HOME_SECRETS, mentions_secret, secret_path
    from ama.permissions._session import PermissionSession
    from ama.permissions._shell import Analysis, Command, analyze
    from ama.permissions._types import (
        ALLOW_ONCE,
        ALLOW_SESSION,
        DENY,
        MODES,
        Answer,
        AutoDecision,
        Decision,
        HookDecision,
        HookVerdict,
        PermissionContext,
        SandboxInfo,
        SandboxStatus,
        check_mode,
    )

#: public name -> (submodule, its name there)
_LAZY: dict[str, tuple[str, str]] = {
    "ALLOW_ONCE": ("ama.permissions._types", "ALLOW_ONCE"),
    "ALLOW_SESSION": ("ama.permissions._types", "ALLOW_SESSION"),
    "Analysis": ("ama.permissions._shell", "Analysis"),
    "Answer": ("ama.permissions._types", "Answer"),
    "AutoDecision": ("ama.permissions._types", "AutoDecision"),
    "CLASSIFIER_PROMPT": ("ama.permissions._classifier", "SYSTEM_PROMPT"),
    "Classifier": ("ama.permissions._classifier", "Classifier"),
    "ClassifyRequest": ("ama.permissions._classifier", "ClassifyRequest"),
    "Command": ("ama.permissions._shell", "Command"),
    "DANGEROUS": ("ama.permissions._dangerous", "DANGEROUS"),
    "DENY": ("ama.permissions._types", "DENY"),
    "Danger": ("ama.permissions._dangerous", "Danger"),
    "Decision": ("ama.permissions._types", "Decision"),
    "Finding": ("ama.permissions._dangerous", "Finding"),
    "HOME_SECRETS": ("ama.permissions._secrets", "HOME_SECRETS"),
    "HookDecision": ("ama.permissions._types", "HookDecision"),
    "HookVerdict": ("ama.permissions._types", "HookVerdict"),
    "MODES": ("ama.permissions._types", "MODES"),
    "PermissionContext": ("ama.permissions._types", "PermissionContext"),
    "PermissionSession": ("ama.permissions._session", "PermissionSession"),
    "READ_ONLY_TOOLS": ("ama.permissions._pipeline", "READ_ONLY_TOOLS"),
    "Rule": ("ama.permissions._rules", "Rule"),
    "Rules": ("ama.permissions._rules", "Rules"),
    "SandboxInfo": ("ama.permissions._types", "SandboxInfo"),
    "SandboxStatus": ("ama.permissions._types", "SandboxStatus"),
    "TOOLS": ("ama.permissions._pipeline", "TOOLS"),
    "ToolSpec": ("ama.permissions._pipeline", "ToolSpec"),
    "Verdict": ("ama.permissions._classifier", "Verdict"),
    "analyze": ("ama.permissions._shell", "analyze"),
    "call_key": ("ama.permissions._classifier", "call_key"),
    "check_mode": ("ama.permissions._types", "check_mode"),
    "decide": ("ama.permissions._pipeline", "decide"),
    "find_dangers": ("ama.permissions._dangerous", "find_dangers"),
    "mentions_secret": ("ama.permissions._secrets", "mentions_secret"),
    "os_sandbox_line": ("ama.permissions._classifier", "os_sandbox_line"),
    "parse_answer": ("ama.permissions._classifier", "parse_answer"),
    "resolve_path": ("ama.permissions._pipeline", "resolve_path"),
    "secret_path": ("ama.permissions._secrets", "secret_path"),
}


def __getattr__(name: str) -> object:
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(_import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "ALLOW_ONCE",
    "ALLOW_SESSION",
    "Analysis",
    "Answer",
    "AutoDecision",
    "CLASSIFIER_PROMPT",
    "Classifier",
    "ClassifyRequest",
    "Command",
    "DANGEROUS",
    "DENY",
    "Danger",
    "Decision",
    "Finding",
    "HOME_SECRETS",
    "HookDecision",
    "HookVerdict",
    "MODES",
    "PermissionContext",
    "PermissionSession",
    "READ_ONLY_TOOLS",
    "Rule",
    "Rules",
    "SandboxInfo",
    "SandboxStatus",
    "TOOLS",
    "ToolSpec",
    "Verdict",
    "analyze",
    "call_key",
    "check_mode",
    "decide",
    "find_dangers",
    "mentions_secret",
    "os_sandbox_line",
    "parse_answer",
    "resolve_path",
    "secret_path",
]
