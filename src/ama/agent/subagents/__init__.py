"""Sub-agents: the ``task`` / ``task_ctl`` tools, agent types, the task registry (docs/agents.md).

``install(...)`` is the composition hook: a ``TaskManager`` and its two tools for a session
at ``depth`` (0 = top level), or None beyond ``tasks.maxDepth``.
"""

from __future__ import annotations

from typing import Any

from ama.agent.subagents.caps import TaskCaps
from ama.agent.subagents.manager import TaskManager
from ama.agent.subagents.registry import TaskInfo, TaskRegistry


def install(*, cwd: str, config: Any, depth: int, config_dir: str, data_dir: str) -> tuple[TaskManager | None, list[Any]]:
    caps = TaskCaps.from_config(config)
    if depth >= caps.max_depth:
        return None, []
    from ama.agent.subagents.task_tool import make_task_tools

    manager = TaskManager(cwd=cwd, config=config, depth=depth, config_dir=config_dir, data_dir=data_dir)
    return manager, list(make_task_tools(manager))


__all__ = ["TaskCaps", "TaskInfo", "TaskManager", "TaskRegistry", "install"]
