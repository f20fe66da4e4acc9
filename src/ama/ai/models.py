"""Built-in providers and their models, with prices.

Prices in USD per million tokens: input (uncached), output, cache read, cache write.
Anthropic cache writes are the 5-minute TTL price; OpenAI charges nothing for writes.
Sources: Anthropic's pricing page (docs.anthropic.com/en/docs/about-claude/pricing) and
OpenAI's (platform.openai.com/docs/pricing), looked up 2026-11-30.  A model missing here
can be declared in the user config (see docs/providers.md).
"""

from __future__ import annotations

from ama.ai.types import Model, ModelCost

ANTHROPIC_URL = "https://api.anthropic.com"
OPENAI_URL = "https://api.openai.com/v1"

#: provider -> (api, base url, key variable)
BUILTIN_PROVIDERS: dict[str, tuple[str, str, str]] = {
    "anthropic": ("anthropic-messages", ANTHROPIC_URL, "ANTHROPIC_API_KEY"),
    "openai": ("openai-completions", OPENAI_URL, "OPENAI_API_KEY"),
}

# (id, context window, max output tokens, reasoning, (input, output, cache read, cache write))
_ANTHROPIC = [
    ("claude-sonnet-4-5", 200_000, 64_000, True, (3.0, 15.0, 0.30, 3.75)),
    ("claude-haiku-4-5", 200_000, 64_000, True, (1.0, 5.0, 0.10, 1.25)),
    ("claude-opus-4-5", 200_000, 64_000, True, (5.0, 25.0, 0.50, 6.25)),
    ("claude-opus-4-1", 200_000, 32_000, True, (15.0, 75.0, 1.50, 18.75)),
    ("claude-sonnet-4-0", 200_000, 64_000, True, (3.0, 15.0, 0.30, 3.75)),
    ("claude-3-5-haiku-latest", 200_000, 8_192, False, (0.80, 4.0, 0.08, 1.0)),
]
_OPENAI = [
    ("gpt-5", 400_000, 128_000, True, (1.25, 10.0, 0.125, 0.0)),
    ("gpt-5-mini", 400_000, 128_000, True, (0.25, 2.0, 0.025, 0.0)),
    ("gpt-4.1", 1_047_576, 32_768, False, (2.0, 8.0, 0.50, 0.0)),
    ("gpt-4.1-mini", 1_047_576, 32_768, False, (0.40, 1.60, 0.10, 0.0)),
    ("gpt-4o", 128_000, 16_384, False, (2.50, 10.0, 1.25, 0.0)),
    ("gpt-4o-mini", 128_000, 16_384, False, (0.15, 0.60, 0.075, 0.0)),
    ("o4-mini", 200_000, 100_000, True, (1.10, 4.40, 0.275, 0.0)),
]


def builtin_models() -> list[Model]:
    out: list[Model] = []
    for provider, table in (("anthropic", _ANTHROPIC), ("openai", _OPENAI)):
        api, url, env = BUILTIN_PROVIDERS[provider]
        for id, window, max_tokens, reasoning, (i, o, cr, cw) in table:
            out.append(
                Model(
                    provider=provider,
                    id=id,
                    api=api,
                    base_url=url,
                    context_window=window,
                    max_tokens=max_tokens,
                    cost=ModelCost(input=i, output=o, cache_read=cr, cache_write=cw),
                    reasoning=reasoning,
                    api_key_env=env,
                    requires_key=True,
                )
            )
    return out

#: the model used when none is configured: the first whose key variable is set
DEFAULT_MODELS = (("ANTHROPIC_API_KEY", "anthropic/claude-sonnet-4-5"), ("OPENAI_API_KEY", "openai/gpt-4.1"))

#: The small, cheap model of each built-in family: (model id prefix, small model id).  Side
#: jobs such as the ``auto`` permission classifier default to the session model's one.
SMALL_MODELS = (
    ("claude-", "claude-haiku-4-5"),
    ("gpt-5", "gpt-5-mini"),
    ("gpt-4.1", "gpt-4.1-mini"),
    ("gpt-4o", "gpt-4o-mini"),
    ("o3", "o4-mini"),
    ("o4", "o4-mini"),
)


def small_model_ref(provider: str, model_id: str) -> str | None:
    """``provider/<small id>`` of the family ``model_id`` belongs to, or None (no known family:
    the caller uses the model itself).  The provider is kept, so a proxy that serves the same
    ids keeps serving the side job."""
    for prefix, small in SMALL_MODELS:
        if model_id.startswith(prefix):
            return f"{provider}/{small}"
    return None
