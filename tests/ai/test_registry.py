"""Model registry: built-ins, config providers, validation, lookup, keys, prices."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ama.ai import ModelRegistry, calculate_cost, split_ref
from ama.config.loader import load_config
from ama.errors import InvalidArguments
from ama.messages import Usage

OLLAMA = {
    "api": "openai-completions",
    "baseUrl": "http://localhost:11434/v1",
    "models": [
        {"id": "qwen3:8b", "contextWindow": 40960, "maxTokens": 8192, "reasoning": True, "input": ["text"]},
        {"id": "llama3.1:8b"},
    ],
}


def test_builtins_have_prices_and_keys():
    reg = ModelRegistry.load(None)
    refs = [m.ref for m in reg.list()]
    for ref in ("anthropic/claude-sonnet-4-5", "anthropic/claude-opus-4-1", "anthropic/claude-haiku-4-5",
                "openai/gpt-4.1", "openai/gpt-4.1-mini", "openai/gpt-4o", "openai/gpt-5", "openai/gpt-5-mini",
                "openai/o4-mini"):  # fmt: skip
        assert ref in refs
        m = reg.get(ref)
        assert m.cost is not None and m.requires_key
    sonnet = reg.get("anthropic/claude-sonnet-4-5")
    assert sonnet.api == "anthropic-messages" and sonnet.api_key_env == "ANTHROPIC_API_KEY"
    assert reg.get("openai/gpt-4.1").base_url == "https://api.openai.com/v1"
    assert len(refs) == len(set(refs))


def test_cost_per_million_tokens():
    m = ModelRegistry.load(None).get("anthropic/claude-sonnet-4-5")
    cost = calculate_cost(m, Usage(input=1_000_000, output=100_000, cache_read=2_000_000, cache_write=400_000))
    assert (cost.input, cost.output) == pytest.approx((3.0, 1.5))
    assert (cost.cache_read, cost.cache_write) == pytest.approx((0.6, 1.5))
    assert cost.total == pytest.approx(6.6)
    local = ModelRegistry.load({"providers": {"ollama": OLLAMA}}).get("ollama/qwen3:8b")
    assert calculate_cost(local, Usage(input=10)) is None


def test_user_providers_from_config_file(tmp_path: Path, monkeypatch):
    user = tmp_path / "config.json"
    user.write_text(json.dumps({"providers": {"ollama": OLLAMA, "proxy": {
        "api": "anthropic-messages", "baseUrl": "https://llm.example.test", "apiKeyEnv": "PROXY_KEY",
        "channel": "messages", "headers": {"x-team": "core"},
        "models": [{"id": "kimi-k2.5", "contextWindow": 256000, "maxTokens": 32000,
                    "cost": {"input": 0.6, "output": 2.5, "cacheRead": 0.15}}]}}}))  # fmt: skip
    cfg = load_config(tmp_path, user_path=user)
    assert cfg.warnings == []
    reg = ModelRegistry.load(cfg)
    assert reg.errors == {}
    q = reg.get("ollama/qwen3:8b")
    assert (q.api, q.base_url, q.context_window, q.max_tokens, q.reasoning, q.images) == (
        "openai-completions", "http://localhost:11434/v1", 40960, 8192, True, False)  # fmt: skip
    assert not q.requires_key and reg.api_key(q) is None
    d = reg.get("ollama/llama3.1:8b")
    assert d.context_window == 128_000 and d.images
    k = reg.get("proxy/kimi-k2.5")
    assert k.channel == "messages" and k.headers == {"x-team": "core"}
    assert k.cost.cache_read == 0.15 and k.cost.cache_write == 0
    monkeypatch.setenv("PROXY_KEY", "secret")
    assert reg.api_key(k) == "secret"


def test_literal_key_and_builtin_override():
    reg = ModelRegistry.load(
        {
            "providers": {
                "openai": {"baseUrl": "http://127.0.0.1:8080/v1", "models": [{"id": "my-finetune"}]},
                "vllm": {"api": "openai-completions", "baseUrl": "http://gpu:8000/v1", "apiKey": "token-abc",
                         "models": [{"id": "Qwen/Qwen3-32B"}]},  # fmt: skip
            }
        }
    )
    gpt = reg.get("openai/gpt-4.1")
    assert gpt.base_url == "http://127.0.0.1:8080/v1" and gpt.cost is not None and not gpt.requires_key
    assert reg.get("openai/my-finetune").api == "openai-completions"
    v = reg.get("vllm/Qwen/Qwen3-32B")  # split at the first "/"
    assert v.id == "Qwen/Qwen3-32B" and reg.api_key(v) == "token-abc"
    assert split_ref("vllm/Qwen/Qwen3-32B") == ("vllm", "Qwen/Qwen3-32B")


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ({"api": "openai-chat", "baseUrl": "http://x", "models": [{"id": "m"}]}, "providers.bad.api: must be one of"),
        ({"api": "openai-completions", "baseUrl": "localhost:1", "models": [{"id": "m"}]}, "providers.bad.baseUrl"),
        ({"api": "openai-completions", "baseUrl": "http://x", "models": []}, "providers.bad.models: must be a non-empty"),
        ({"api": "openai-completions", "baseUrl": "http://x", "models": [{"id": "m", "contextWindow": "big"}]},
         "providers.bad.models[m].contextWindow: must be a positive integer"),
        ({"api": "openai-completions", "baseUrl": "http://x", "models": [{"id": "m", "cost": {"input": 1}}]},
         "providers.bad.models[m].cost.output: missing"),
        ({"api": "openai-completions", "baseUrl": "http://x", "models": [{"id": "m", "cost": {"input": 1, "output": -2}}]},
         "providers.bad.models[m].cost.output: must be a number"),
        ({"api": "openai-completions", "baseUrl": "http://x", "apiKeyEnv": "NOT VALID", "models": [{"id": "m"}]},
         "providers.bad.apiKeyEnv"),
        ({"api": "openai-completions", "baseUrl": "http://x", "models": [{"id": "m"}, {"id": "m"}]},
         "providers.bad.models[m]: duplicate id"),
        ("not an object", "providers.bad: must be an object"),
    ],
)  # fmt: skip
def test_validation_errors_name_provider_and_key(spec, needle):
    reg = ModelRegistry.load({"providers": {"bad": spec, "ollama": OLLAMA}})
    assert any(needle in p for p in reg.errors["bad"]), reg.errors
    assert reg.get("ollama/qwen3:8b")  # other providers still work
    with pytest.raises(InvalidArguments) as e:
        reg.get("bad/m")
    assert needle in str(e.value) and "misconfigured" in str(e.value)
    with pytest.raises(InvalidArguments):
        ModelRegistry.load({"providers": {"bad": spec}}, strict=True)


def test_unknown_keys_are_warnings():
    spec = {**OLLAMA, "apikey": "typo", "models": [{"id": "m", "ctx": 1}]}
    reg = ModelRegistry.load({"providers": {"ollama": spec}})
    assert reg.errors == {}
    assert reg.warnings == ["providers.ollama.apikey: unknown key; ignored", "providers.ollama.models[m].ctx: unknown key; ignored"]


def test_lookup_errors_list_close_matches():
    reg = ModelRegistry.load(None)
    with pytest.raises(InvalidArguments) as e:
        reg.get("anthropic/claude-sonet-4-5")
    assert "anthropic/claude-sonnet-4-5" in str(e.value) and "anthropic/claude-sonet-4-5" in str(e.value)
    assert "anthropic/claude-sonnet-4-5" in e.value.data["candidates"]
    with pytest.raises(InvalidArguments) as e:
        reg.get("antropic/claude-sonnet-4-5")
    assert "unknown provider 'antropic'" in str(e.value) and "anthropic/claude-sonnet-4-5" in e.value.data["candidates"]
    with pytest.raises(InvalidArguments):
        reg.get("anthropic/")
    assert reg.get("gpt-4.1").ref == "openai/gpt-4.1"  # a bare id unique among providers
    with pytest.raises(InvalidArguments):
        reg.get("gpt-9")


def test_scripted_refs_and_reserved_name(tmp_path: Path):
    reg = ModelRegistry.load({"providers": {"scripted": OLLAMA}})
    assert "scripted" in reg.errors
    p = tmp_path / "s.json"
    p.write_text('{"contextWindow": 1000, "turns": ["hi"]}')
    m = reg.get(f"scripted/{p}")
    assert m.api == "scripted" and m.context_window == 1000 and m.cost is None
    assert reg.get("scripted/does/not/exist.json").api == "scripted"  # the error comes with the request


def test_docs_price_table_matches_the_builtin_table():
    doc = (Path(__file__).resolve().parents[2] / "docs" / "providers.md").read_text()
    rows = {}
    for line in doc.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 7 and cells[0].startswith("`") and "/" in cells[0]:
            rows[cells[0].strip("`")] = [float(c.replace(",", "")) for c in cells[1:]]
    models = ModelRegistry.load(None).list()
    assert set(rows) == {m.ref for m in models}
    for m in models:
        c = m.cost
        assert rows[m.ref] == [m.context_window, m.max_tokens, c.input, c.output, c.cache_read, c.cache_write], m.ref
