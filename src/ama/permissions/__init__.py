"""Permission modes, rules, the dangerous-command table, secret paths and the decision pipeline.

``decide(tool, args, ctx)`` is one pure function over plain data (``PermissionContext``);
``PermissionSession`` wraps it with the session's "allow for session" memory.  The only
knowledge of ``ama.sandbox`` is the ``SandboxStatus`` protocol (``active``,
``isolates_network``).  See docs/permissions.md.
"""

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
