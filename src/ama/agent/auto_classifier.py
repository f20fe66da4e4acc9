"""The ``auto`` permission mode's classifier: one small model request per new call.

``ModelClassifier`` is the ``ama.permissions.Classifier`` the composition root gives the
session's ``PermissionSession``.  The model is ``permissions.classifier.model``, else the small
model of the session model's family (``ama.ai.models.small_model_ref``), else the session
model itself.  Every request sent appends a ``usage`` entry with ``kind:
"permission_classify"`` (cost from the model's price table; zero tokens when it failed).  A failure — an HTTP
error, no answer within ``permissions.classifier.timeoutMs``, an unknown model — is an "ask"
(``Verdict.failed``: not cached).  See docs/permissions.md "auto mode".
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ama.messages import TextContent, Usage, UserMessage, text_of
from ama.permissions import CLASSIFIER_PROMPT, ClassifyRequest, Verdict, parse_answer
from ama.session.entries import MessageEntry

if TYPE_CHECKING:
    from ama.agent.session import AgentSession
    from ama.ai.types import Model

USAGE_KIND = "permission_classify"
#: Output budget of one answer (reasoning models spend some of it before the JSON).
MAX_TOKENS = 1024
#: User messages (newest last) that make up the "recent user intent".
INTENT_MESSAGES = 3
DEFAULT_TIMEOUT_MS = 15_000


def recent_intent(agent: AgentSession, count: int = INTENT_MESSAGES) -> str:
    """The last ``count`` user messages of the branch, oldest first, one block each."""
    texts: list[str] = []
    for e in reversed(agent.session.branch()):
        if isinstance(e, MessageEntry) and isinstance(e.message, UserMessage):
            text = text_of(e.message.content).strip()
            if text:
                texts.append(text)
            if len(texts) >= count:
                break
    return "\n---\n".join(reversed(texts))


class ModelClassifier:
    """Judges one call with a model request (``ama.permissions.Classifier``)."""

    def __init__(self, agent: AgentSession, *, model: str | None = None, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> None:
        self.agent = agent
        self.model_ref = model
        self.timeout_s = max(1, timeout_ms) / 1000
        self.requests = 0

    def model(self) -> Model:
        """The classifier's model (raises ``AmaError`` for an unknown configured one)."""
        from ama.ai.models import small_model_ref

        registry, main = self.agent.registry, self.agent.model
        if self.model_ref:
            return registry.get(self.model_ref)
        small = small_model_ref(main.provider, main.id)
        if small is not None:
            try:
                return registry.get(small)
            except Exception:  # the family's small model is not served here: the model itself
                pass
        return main

    async def classify(self, request: ClassifyRequest) -> Verdict:
        from ama.ai import Context, StreamOptions, complete
        from ama.errors import AmaError

        try:
            model = self.model()
        except AmaError as err:
            return Verdict("ask", f"the permission classifier model is not available: {err.message}", failed=True)
        agent = self.agent
        ctx = Context(system_prompt=CLASSIFIER_PROMPT, messages=[UserMessage(content=request.prompt())], tools=[])
        opts = StreamOptions(
            api_key=agent.registry.api_key(model),
            abort=agent.abort_event,
            session_id=agent.session.id,
            max_tokens=min(model.max_tokens, MAX_TOKENS),
            timeout=self.timeout_s,
        )
        self.requests += 1
        usage = Usage()
        try:
            msg = await asyncio.wait_for(complete(model, ctx, opts), self.timeout_s)
            usage = msg.usage
        except TimeoutError:
            return Verdict("ask", f"the permission classifier did not answer within {self.timeout_s:g} s", failed=True)
        except Exception as exc:  # a provider bug must not run the call unchecked
            return Verdict("ask", f"the permission classifier failed: {type(exc).__name__}: {exc}", failed=True)
        finally:  # every request sent is one usage entry, failed ones included (zero tokens)
            agent.session.append_usage(USAGE_KIND, model.provider, model.id, usage)
        if msg.stop_reason in ("error", "aborted"):
            detail = msg.error_message or msg.stop_reason
            return Verdict("ask", f"the permission classifier request failed: {_first_line(detail)}", failed=True)
        text = "".join(b.text for b in msg.content if isinstance(b, TextContent))
        return parse_answer(text)


def _first_line(text: Any) -> str:
    line = str(text).strip().splitlines()[0] if str(text).strip() else "error"
    return line if len(line) <= 200 else line[:200] + "…"


def from_config(agent: AgentSession, config: Any) -> ModelClassifier:
    """A ``ModelClassifier`` for ``agent`` with ``permissions.classifier.model`` / ``.timeoutMs``."""
    get = config.get if config is not None else (lambda _k, d=None: d)
    return ModelClassifier(
        agent,
        model=get("permissions.classifier.model") or None,
        timeout_ms=int(get("permissions.classifier.timeoutMs") or DEFAULT_TIMEOUT_MS),
    )
