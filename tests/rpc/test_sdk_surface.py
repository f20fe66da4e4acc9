"""The SDK's public surface is exactly the intended names (and they are sorted)."""

from __future__ import annotations

import ama.sdk


def test_exported_names() -> None:
    public = sorted((n for n in vars(ama.sdk) if not n.startswith("_") and n not in ("annotations", "Any", "Awaitable", "Callable", "AgentOptions", "build_agent")), key=str.casefold)
    assert ama.sdk.__all__ == sorted(ama.sdk.__all__, key=str.casefold)
    assert set(ama.sdk.__all__) == set(public)
    assert ama.sdk.__all__ == ["AgentSession", "AmaError", "BuiltinTool", "create_agent", "Limits", "RunResult", "ToolContext", "ToolError", "ToolResult"]
