"""``PermissionSession``: the pipeline plus what the user allowed for this session."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ama.permissions._classifier import Classifier, ClassifyRequest, Verdict, call_key, os_sandbox_line
from ama.permissions._rules import Rule
from ama.permissions._types import Answer, AutoDecision, Decision, HookVerdict, PermissionContext, check_mode


class PermissionSession:
    """Holds the context of one agent session and its "allow for session" memory.

    ``decide`` is the pure pipeline over the current context; ``resolve`` turns the user's
    answer to an "ask" into the final decision and remembers ``allow_session`` answers
    (``Decision.session_rules``) until the session ends.  In ``auto`` mode ``settle`` hands
    a pending "ask" to the ``classifier`` and remembers its verdicts per normalized call.
    """

    def __init__(self, context: PermissionContext, classifier: Classifier | None = None) -> None:
        self._ctx = context
        self.classifier = classifier
        self._verdicts: dict[str, Verdict] = {}

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
        # the pipeline (command analysis, the dangerous table, secret paths) is imported at the
        # first decision, not when a session starts: RPC start-up answers without it
        from ama.permissions._pipeline import decide

        return decide(tool_name, args, self._ctx, read_only=read_only, hook=hook)

    async def settle(
        self, tool_name: str, args: dict[str, Any] | None, decision: Decision, *, intent: str = ""
    ) -> Decision:
        """The final decision of a pending ``auto`` "ask": the classifier's verdict (cached for
        the session; ``AutoDecision.cached``), an "ask" when there is no classifier or it
        failed, and a deny for an "ask" when nobody can answer.  Other decisions: unchanged."""
        if not decision.pending:
            return decision
        sandboxed = decision.sandboxed
        key = call_key(tool_name, args, sandboxed=sandboxed)
        verdict = self._verdicts.get(key)
        cached = verdict is not None
        if verdict is None:
            if self.classifier is None:
                verdict = Verdict("ask", "no permission classifier is available", failed=True)
            else:
                request = ClassifyRequest(
                    tool=tool_name,
                    input=dict(args or {}),
                    workspace=self._ctx.cwd,
                    intent=intent,
                    os_sandbox=os_sandbox_line(self._ctx.sandbox, tool=tool_name.lower(), sandboxed=sandboxed),
                )
                verdict = await self.classifier.classify(request)
            if not verdict.failed:
                self._verdicts[key] = verdict
        if verdict.decision == "allow":
            reason = f"Allowed by the permission classifier (auto mode): {verdict.reason}"
        else:
            reason = f"auto mode: the permission classifier asks ({verdict.reason.rstrip('.')})."
        settled = replace(
            decision,
            action=verdict.decision,
            reason=reason,
            source="classifier",
            pending=False,
            auto=AutoDecision("classifier", verdict.decision, verdict.reason, cached),
        )
        if settled.action == "ask" and self._ctx.unattended:
            from ama.permissions._pipeline import unattended_deny

            return unattended_deny(tool_name, settled)
        return settled

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
            return Decision("deny", reason, "user", decision.rule, decision.sandboxed, auto=decision.auto)
        if answer.kind == "allow_session" and decision.session_rules:
            self.allow_for_session(decision.session_rules)
            names = ", ".join(f"`{r}`" for r in decision.session_rules)
            return Decision("allow", f"Approved by the user for this session ({names}).", "user",
                            str(decision.session_rules[0]), decision.sandboxed, auto=decision.auto)  # fmt: skip
        return Decision("allow", "Approved by the user.", "user", decision.rule, decision.sandboxed, auto=decision.auto)
