"""``PermissionSession``: the pipeline plus what the user allowed for this session."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ama.permissions._pipeline import decide
from ama.permissions._rules import Rule
from ama.permissions._types import Answer, Decision, HookVerdict, PermissionContext, check_mode


class PermissionSession:
    """Holds the context of one agent session and its "allow for session" memory.

    ``decide`` is the pure pipeline over the current context; ``resolve`` turns the user's
    answer to an "ask" into the final decision and remembers ``allow_session`` answers
    (``Decision.session_rules``) until the session ends.
    """

    def __init__(self, context: PermissionContext) -> None:
        self._ctx = context

    @property
    def context(self) -> PermissionContext:
        return self._ctx

    @property
    def mode(self) -> str:
        return self._ctx.mode

    def set_mode(self, mode: str) -> None:
        self._ctx = replace(self._ctx, mode=check_mode(mode))

    @property
    def session_rules(self) -> list[str]:
        return sorted(str(r) for r in self._ctx.session_allows)

    def allow_for_session(self, rules: tuple[Rule, ...] | list[Rule]) -> None:
        self._ctx = replace(self._ctx, session_allows=self._ctx.session_allows | frozenset(rules))

    def forget_session_rules(self) -> None:
        self._ctx = replace(self._ctx, session_allows=frozenset())

    def decide(
        self,
        tool_name: str,
        args: dict[str, Any] | None,
        *,
        read_only: bool | None = None,
        hook: HookVerdict | None = None,
    ) -> Decision:
        return decide(tool_name, args, self._ctx, read_only=read_only, hook=hook)

    def resolve(self, decision: Decision, answer: Answer) -> Decision:
        """The final decision after the user answered ``decision`` (an "ask").

        A decision that is not an "ask" is returned unchanged.  ``allow_session`` remembers
        ``decision.session_rules``.  ``deny`` carries the user's feedback to the model.
        """
        if decision.action != "ask":
            return decision
        if answer.kind == "deny":
            reason = "The user denied this tool call."
            if answer.feedback.strip():
                reason += f" The user said: {answer.feedback.strip()}"
            return Decision("deny", reason, "user", decision.rule, decision.sandboxed)
        if answer.kind == "allow_session" and decision.session_rules:
            self.allow_for_session(decision.session_rules)
            names = ", ".join(f"`{r}`" for r in decision.session_rules)
            return Decision("allow", f"Approved by the user for this session ({names}).", "user",
                            str(decision.session_rules[0]), decision.sandboxed)  # fmt: skip
        return Decision("allow", "Approved by the user.", "user", decision.rule, decision.sandboxed)
