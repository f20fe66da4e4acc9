"""The model registry: built-in providers plus those declared under ``providers`` in config.

Config format (pi's models.json shape)::

    {"providers": {"<name>": {"api": "openai-completions" | "anthropic-messages",
                              "baseUrl": "…", "apiKey"?: "…", "apiKeyEnv"?: "…",
                              "channel"?: "…", "headers"?: {…}, "compat"?: {…},
                              "models": [{"id": "…", "contextWindow": N, "maxTokens": N,
                                          "reasoning"?: bool, "input"?: ["text", "image"],
                                          "cost"?: {"input": …, "output": …,
                                                    "cacheRead": …, "cacheWrite": …}}]}}}

A provider named like a built-in (``anthropic``, ``openai``) may override its ``baseUrl``,
key, headers and add or replace models.  A provider with errors is left out; its errors
are kept and reported when one of its models is asked for (``strict=True`` raises at once).
"""

from __future__ import annotations

import builtins
import re
from dataclasses import replace
from typing import Any

from ama.ai.models import BUILTIN_PROVIDERS, builtin_models
from ama.ai.types import Model, ModelCost, resolve_api_key
from ama.errors import InvalidArguments

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_ENV = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_APIS = ("openai-completions", "anthropic-messages")
_PROVIDER_KEYS = {"api", "baseUrl", "apiKey", "apiKeyEnv", "channel", "headers", "compat", "models"}
_MODEL_KEYS = {"id", "name", "contextWindow", "maxTokens", "cost", "reasoning", "input", "images"}
_COST_KEYS = {"input", "output", "cacheRead", "cacheWrite"}
_DEFAULT_WINDOW = 128_000
_DEFAULT_MAX_TOKENS = 16_384


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v > 0


def _is_num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and v >= 0


def split_ref(ref: str) -> tuple[str, str]:
    """``provider/id`` split at the first ``/`` (ids may contain more)."""
    provider, sep, id = ref.partition("/")
    if not sep or not provider or not id:
        raise InvalidArguments(f"model {ref!r}: expected provider/id, e.g. anthropic/claude-sonnet-4-5")
    return provider, id


class ModelRegistry:
    def __init__(self, models: list[Model] | None = None) -> None:
        self._models: dict[str, Model] = {}
        self.errors: dict[str, list[str]] = {}  # provider -> problems
        self.warnings: list[str] = []
        for m in models or []:
            self._models[m.ref] = m

    # --- loading ----------------------------------------------------------------------

    @classmethod
    def load(cls, config: Any = None, *, strict: bool = False) -> ModelRegistry:
        """Built-ins plus the providers of ``config`` (a Config, a mapping with ``providers``,
        or None)."""
        reg = cls(builtin_models())
        providers: Any = config.get("providers") if config is not None else None
        if providers is None:
            providers = {}
        if not isinstance(providers, dict):
            reg.errors["*"] = [f"providers: must be an object, got {type(providers).__name__}"]
            providers = {}
        for name, spec in providers.items():
            problems: list[str] = []
            models = reg._provider(str(name), spec, problems)
            if problems:
                reg.errors[str(name)] = problems
                continue
            if name in BUILTIN_PROVIDERS:
                base = {m.id: m for m in reg._models.values() if m.provider == name}
                for ref in [r for r, m in reg._models.items() if m.provider == name]:
                    del reg._models[ref]
                overrides = {k: v for k, v in reg._builtin_overrides(spec).items() if v is not None}
                merged = {id: replace(m, **overrides) for id, m in base.items()}
                merged.update({m.id: m for m in models})
                for m in merged.values():
                    reg._models[m.ref] = m
            else:
                for m in models:
                    reg._models[m.ref] = m
        if strict and reg.errors:
            raise InvalidArguments("invalid providers config:\n" + "\n".join(reg.problems()))
        return reg

    def problems(self) -> list[str]:
        return [p for name in self.errors for p in self.errors[name]]

    def _builtin_overrides(self, spec: dict) -> dict[str, Any]:
        return {
            "base_url": spec.get("baseUrl"),
            "api_key": spec.get("apiKey"),
            "api_key_env": spec.get("apiKeyEnv"),
            "channel": spec.get("channel"),
            "headers": spec.get("headers"),
            "compat": spec.get("compat"),
            "requires_key": False if spec.get("baseUrl") else None,
        }

    def _provider(self, name: str, spec: Any, problems: list[str]) -> list[Model]:
        where = f"providers.{name}"
        if not _NAME.match(name) or name == "scripted":
            problems.append(f"{where}: invalid provider name (letters, digits, '.', '_', '-'; not 'scripted')")
            return []
        if not isinstance(spec, dict):
            problems.append(f"{where}: must be an object")
            return []
        for k in sorted(set(spec) - _PROVIDER_KEYS):
            self.warnings.append(f"{where}.{k}: unknown key; ignored")
        builtin = BUILTIN_PROVIDERS.get(name)
        api = spec.get("api", builtin[0] if builtin else None)
        if api not in _APIS:
            problems.append(f"{where}.api: must be one of {', '.join(map(repr, _APIS))}, got {api!r}")
        base_url = spec.get("baseUrl", builtin[1] if builtin else None)
        if not isinstance(base_url, str) or not re.match(r"^https?://", base_url):
            problems.append(f"{where}.baseUrl: must be an http(s) URL, got {base_url!r}")
        for key in ("apiKey", "channel"):
            if key in spec and not isinstance(spec[key], str):
                problems.append(f"{where}.{key}: must be a string")
        env = spec.get("apiKeyEnv", builtin[2] if builtin else None)
        if env is not None and (not isinstance(env, str) or not _ENV.match(env)):
            problems.append(f"{where}.apiKeyEnv: must be an environment variable name, got {env!r}")
        headers = spec.get("headers")
        if headers is not None and (
            not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values())
        ):
            problems.append(f"{where}.headers: must be an object of strings")
        if "compat" in spec and not isinstance(spec["compat"], dict):
            problems.append(f"{where}.compat: must be an object")
        models_spec = spec.get("models")
        if models_spec is None and builtin:
            models_spec = []
        if not isinstance(models_spec, list) or (not models_spec and not builtin):
            problems.append(f"{where}.models: must be a non-empty list of models")
            return []
        out: list[Model] = []
        seen: set[str] = set()
        for n, ms in enumerate(models_spec):
            mwhere = f"{where}.models[{n}]"
            if not isinstance(ms, dict):
                problems.append(f"{mwhere}: must be an object")
                continue
            id = ms.get("id")
            if not isinstance(id, str) or not id.strip():
                problems.append(f"{mwhere}.id: must be a non-empty string")
                continue
            mwhere = f"{where}.models[{id}]"
            if id in seen:
                problems.append(f"{mwhere}: duplicate id")
            seen.add(id)
            for k in sorted(set(ms) - _MODEL_KEYS):
                self.warnings.append(f"{mwhere}.{k}: unknown key; ignored")
            window = ms.get("contextWindow", _DEFAULT_WINDOW)
            max_tokens = ms.get("maxTokens", _DEFAULT_MAX_TOKENS)
            for key, v in (("contextWindow", window), ("maxTokens", max_tokens)):
                if not _is_int(v):
                    problems.append(f"{mwhere}.{key}: must be a positive integer, got {v!r}")
            cost = None
            c = ms.get("cost")
            if c is not None:
                if not isinstance(c, dict):
                    problems.append(f"{mwhere}.cost: must be an object")
                else:
                    for k in sorted(set(c) - _COST_KEYS):
                        problems.append(f"{mwhere}.cost.{k}: unknown price (use input, output, cacheRead, cacheWrite)")
                    for k in ("input", "output"):
                        if k not in c:
                            problems.append(f"{mwhere}.cost.{k}: missing")
                    for k, v in c.items():
                        if k in _COST_KEYS and not _is_num(v):
                            problems.append(f"{mwhere}.cost.{k}: must be a number >= 0 (USD per million tokens)")
                    if not problems:
                        cost = ModelCost(
                            input=float(c["input"]),
                            output=float(c["output"]),
                            cache_read=float(c.get("cacheRead", 0)),
                            cache_write=float(c.get("cacheWrite", 0)),
                        )
            reasoning = ms.get("reasoning", False)
            if not isinstance(reasoning, bool):
                problems.append(f"{mwhere}.reasoning: must be true or false")
            images = ms.get("images")
            inp = ms.get("input")
            if inp is not None:
                if not isinstance(inp, list) or not all(x in ("text", "image") for x in inp):
                    problems.append(f'{mwhere}.input: must be a list of "text" / "image"')
                else:
                    images = "image" in inp
            if images is not None and not isinstance(images, bool):
                problems.append(f"{mwhere}.images: must be true or false")
            if problems:
                continue
            out.append(
                Model(
                    provider=name,
                    id=id,
                    api=str(api),
                    base_url=str(base_url),
                    context_window=window,
                    max_tokens=max_tokens,
                    cost=cost,
                    channel=spec.get("channel"),
                    reasoning=reasoning,
                    images=True if images is None else images,
                    api_key_env=env,
                    api_key=spec.get("apiKey"),
                    headers=dict(headers) if headers else None,
                    compat=dict(spec["compat"]) if isinstance(spec.get("compat"), dict) else None,
                    requires_key=bool(builtin) and not spec.get("baseUrl"),
                )
            )
        return out

    # --- lookup -----------------------------------------------------------------------

    def list(self) -> builtins.list[Model]:
        return list(self._models.values())

    def api_key(self, model: Model) -> str | None:
        return resolve_api_key(model)

    def get(self, ref: str) -> Model:
        """The model for ``provider/id`` (``scripted/<path>`` for a script file).  A bare id
        is accepted when exactly one provider has it."""
        if "/" not in ref:
            matches = [m for m in self._models.values() if m.id == ref]
            if len(matches) == 1:
                return matches[0]
            if matches:
                raise InvalidArguments(
                    f"model {ref!r} is ambiguous: " + ", ".join(m.ref for m in matches),
                    data={"candidates": [m.ref for m in matches]},
                )
            raise InvalidArguments(self._unknown(ref, "use provider/id"), data={"candidates": self._close(ref)})
        provider, id = split_ref(ref)
        if provider == "scripted":
            from ama.ai.scripted import model_for

            return model_for(id)
        if provider in self.errors:
            raise InvalidArguments(
                f"provider {provider!r} is misconfigured:\n  " + "\n  ".join(self.errors[provider])
            )
        model = self._models.get(ref)
        if model is not None:
            return model
        if not any(m.provider == provider for m in self._models.values()):
            names = sorted({m.provider for m in self._models.values()} | {"scripted"})
            raise InvalidArguments(
                f"unknown provider {provider!r} in model {ref!r}; known providers: {', '.join(names)}",
                data={"candidates": self._close(ref)},
            )
        raise InvalidArguments(self._unknown(ref, f"declare it under providers.{provider}.models"), data={"candidates": self._close(ref)})

    def _close(self, ref: str) -> builtins.list[str]:
        import difflib  # only to suggest a name for a model that was not found

        refs = list(self._models)
        ids = {m.id: m.ref for m in self._models.values()}
        close = difflib.get_close_matches(ref, refs, n=5, cutoff=0.5)
        close += [ids[i] for i in difflib.get_close_matches(ref.split("/")[-1], list(ids), n=3, cutoff=0.5)]
        return list(dict.fromkeys(close))[:5]

    def _unknown(self, ref: str, hint: str) -> str:
        close = self._close(ref)
        msg = f"unknown model {ref!r}"
        if close:
            msg += "; did you mean " + ", ".join(close) + "?"
        return msg + f" ({hint})"
