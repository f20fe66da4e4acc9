"""The composition root: build the parts once per process and hand the same settings to
every user of them (the bash tool and the permission pipeline get one sandbox decision).

``build_agent`` serves the CLI (print, interactive, RPC) and the SDK alike.  It is two steps:

* :func:`prepare_agent` -- the configuration, the model registry, the session, the model, the
  thinking level, the permission mode, the budgets and the fallback model: everything whose
  errors stop the start (an unknown model, a bad setting) and what ``get_state`` reports;
* :func:`finish_agent` -- the parts a run needs: the bash sandbox, the tools, the prompt
  catalog and skills, the sub-agent types, the permission pipeline, hooks, checkpoints, the
  system prompt, and the ``AgentSession`` itself.

``ama --mode rpc`` answers its first commands between the two (rpc/start.py); everyone else
calls ``build_agent``.  This module imports nothing heavy at its top: each step imports what
it uses.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ama.agent.options import AgentOptions as AgentOptions
from ama.errors import AmaError, InvalidArguments

if TYPE_CHECKING:
    from ama.agent.limits import Limits
    from ama.agent.session import AgentSession


SANDBOX_CHOICES = ("auto", "off")


class _Overlay:
    """A config read through ``get`` with some keys replaced."""

    def __init__(self, config: Any, values: dict[str, Any]) -> None:
        self._config = config
        self._values = values

    def get(self, key: str, default: Any = None) -> Any:
        if key in self._values:
            return self._values[key]
        return self._config.get(key, default)


def sandbox_config(config: Any, choice: str | None) -> Any:
    """The config the bash sandbox is built from: ``choice`` ("auto" | "off") replaces the
    ``sandbox.bash`` setting; None keeps the config's.  ``sandbox.network``,
    ``sandbox.writable`` and ``sandbox.env`` are read as usual."""
    if choice is None:
        return config
    if choice not in SANDBOX_CHOICES:
        raise InvalidArguments(f"sandbox must be one of {', '.join(SANDBOX_CHOICES)}, got {choice!r}")
    values = {"sandbox.bash": choice}
    if choice == "auto":  # asked for in code: a config's sandbox.enabled: off does not undo it
        values["sandbox.enabled"] = "auto"  # (AMA_SANDBOX=off still does)
    return _Overlay(config, values)


def open_session(opts: AgentOptions, sessions_dir: str) -> Any:
    from ama.session.store import Session

    if opts.session == "memory":
        return Session.in_memory(opts.cwd)
    if opts.session == "new":
        return Session.create(opts.cwd, sessions_dir)
    from ama.session.catalog import list_page, resolve, scan  # only to find an existing one

    if opts.session == "continue":
        page = list_page(scan(sessions_dir), cwd=opts.cwd, limit=1)
        if not page.sessions:
            return Session.create(opts.cwd, sessions_dir)
        return Session.open(page.sessions[0].path)
    r = resolve(sessions_dir, opts.session)
    return Session.open(r.path)


def pick_model(registry: Any, opts: AgentOptions, config: Any, restored: str | None) -> Any:
    ref = opts.model or restored or config.get("model")
    if ref:
        try:
            return registry.get(ref)
        except AmaError:
            if opts.model or not restored:
                raise
            ref = config.get("model")  # the session's model is gone: fall back quietly
            if ref:
                return registry.get(ref)
    from ama.ai.models import DEFAULT_MODELS

    for env, default in DEFAULT_MODELS:
        if os.environ.get(env):
            return registry.get(default)
    raise InvalidArguments(
        "no model configured: set ANTHROPIC_API_KEY or OPENAI_API_KEY, pass --model provider/id, "
        "or declare a provider in the config (see docs/providers.md). To try ama without a key: "
        "ama -p hello --model scripted/examples/demo.json"
    )


class AgentDraft:
    """The first step of a build (:func:`prepare_agent`): settled choices, no parts yet.  (A
    plain class: making a dataclass costs about a millisecond, on the path to RPC's first
    answer.)"""

    __slots__ = (
        "opts", "config", "registry", "session", "model", "thinking_level", "permission_mode", "limits",
        "fallback_model", "warnings",
    )  # fmt: skip

    def __init__(
        self, *, opts: AgentOptions, config: Any, registry: Any, session: Any, model: Any, thinking_level: str,
        permission_mode: str, limits: Limits, fallback_model: Any, warnings: list[str],
    ) -> None:  # fmt: skip
        self.opts = opts
        self.config = config
        self.registry = registry
        self.session = session
        self.model = model
        self.thinking_level = thinking_level
        self.permission_mode = permission_mode
        self.limits = limits
        self.fallback_model = fallback_model
        #: the configuration and registry warnings, in the order ``build_agent`` reports them
        self.warnings = warnings

    def state(self) -> dict[str, Any] | None:
        """What ``AgentSession.state()`` of the agent :func:`finish_agent` makes will say, when
        that is known before it is built: not in plan mode (``plan.model`` may replace the
        model), nor a resumed session that goes back into it (its ``ama.plan_state`` is
        active and no mode was given: ``agent/plan_mode.py``).  Else None."""
        if self.permission_mode == "plan":
            return None
        if self.session.entries and self.opts.permission_mode is None:
            from ama.agent.plans import STATE_TYPE

            plan = self.session.latest_custom(STATE_TYPE)
            if isinstance(plan, dict) and plan.get("active"):
                return None
        from ama.agent.snapshot import agent_state

        return agent_state(self.session, self.model, self.thinking_level, self.permission_mode)


def prepare_agent(opts: AgentOptions) -> AgentDraft:
    """The first step: raises what stops a start (config, model, options); opens the session."""
    from ama.agent.limits import Limits
    from ama.ai.registry import ModelRegistry
    from ama.config import paths
    from ama.config.loader import load_config
    from ama.permission_modes import PERMISSION_MODES

    cwd = os.path.abspath(opts.cwd)
    opts.cwd = cwd
    config = opts.config if opts.config is not None else load_config(cwd)
    warnings = list(config.warnings)
    registry = ModelRegistry.load(config)
    warnings += list(getattr(registry, "warnings", []))
    sandbox_config(config, opts.sandbox)  # a bad choice is refused before anything opens
    sessions_dir = str(paths.sessions_dir(opts.session_dir or config.get("sessionDir")))
    session = open_session(opts, sessions_dir)
    try:
        restored = session.context() if session.entries else None
        model = pick_model(
            registry, opts, config, restored.model.ref if restored and restored.model else None
        )
        thinking = (
            opts.thinking or (restored.thinking_level if restored else None) or config.get("thinkingLevel")
        )
        mode = opts.permission_mode or config.get("permissionMode")
        if mode not in PERMISSION_MODES:
            raise InvalidArguments(
                f"unknown permission mode {mode!r}; expected one of {', '.join(PERMISSION_MODES)}"
            )
        limits = Limits.from_config(config).over(opts.limits).over(Limits.checked(max_turns=opts.max_turns))
        fallback_ref = opts.fallback_model or config.get("fallbackModel")
        fallback = registry.get(fallback_ref) if fallback_ref else None
    except BaseException:
        session.close()
        raise
    return AgentDraft(
        opts=opts, config=config, registry=registry, session=session, model=model,
        thinking_level=thinking or "off", permission_mode=mode, limits=limits, fallback_model=fallback,
        warnings=warnings,
    )  # fmt: skip


def build_agent(opts: AgentOptions) -> tuple[AgentSession, list[str]]:
    """The agent and the configuration warnings to show the user."""
    draft = prepare_agent(opts)
    agent, warnings = finish_agent(draft)
    return agent, draft.warnings + warnings


def finish_agent(draft: AgentDraft) -> tuple[AgentSession, list[str]]:
    """The second step: the agent, and the warnings its parts gave (not the draft's)."""
    from ama.agent.parts import AgentParts, AgentSettings
    from ama.agent.session import AgentSession, default_output_dir
    from ama.agent.system_prompt import build_system_prompt
    from ama.config import paths
    from ama.hooks import parse_hooks
    from ama.permissions import PermissionContext, PermissionSession, Rules
    from ama.sandbox import make_bash_sandbox
    from ama.tools import BackgroundJobs, builtin_tools

    opts, config, registry, session = draft.opts, draft.config, draft.registry, draft.session
    cwd = opts.cwd
    warnings: list[str] = []
    try:
        data_dir = str(paths.data_dir())
        output_dir = default_output_dir(data_dir, session.id)
        sandbox = make_bash_sandbox(
            sandbox_config(config, opts.sandbox),
            cwd=cwd,
            data_dir=data_dir,
            session_id=session.id,
            output_dirs=[output_dir],
            config_dir=str(paths.config_dir()),
            secret_env=sorted(
                {str(m.api_key_env) for m in registry.list() if getattr(m, "api_key_env", None)}
            ),
        )
        warnings += list(sandbox.warnings)
        jobs = BackgroundJobs()
        tools = builtin_tools(
            sandbox_active=sandbox.active, sandbox_description=sandbox.description_suffix or None, jobs=jobs
        )
        from ama.agent.catalog import PromptCatalog, make_skill_tool

        prompts = PromptCatalog.load(cwd, str(paths.config_dir()))
        warnings += prompts.warnings
        if prompts.model_skills():
            tools.append(make_skill_tool(prompts))
        tools += list(opts.extra_tools)
        from ama.agent.subagents import install as install_tasks

        task_manager, task_tools = install_tasks(
            cwd=cwd,
            config=config,
            depth=opts.task_depth,
            config_dir=str(paths.config_dir()),
            data_dir=data_dir,
        )
        tools += task_tools
        permissions = PermissionSession(
            PermissionContext(
                mode=draft.permission_mode,
                cwd=cwd,
                home=os.path.expanduser("~"),
                rules=Rules.from_config(config, errors=warnings),
                sandbox=sandbox,
                unattended=opts.broker is None,
                config_dir=str(paths.config_dir()),
                data_dir=data_dir,
            )
        )
        hooks = parse_hooks(config.get("hooks"), errors=warnings)
        tracker = None
        holder: list[AgentSession] = []

        def notify(message: str) -> None:  # before the agent exists: a start-up warning
            if holder:
                holder[0].emit({"type": "notification", "level": "warn", "message": message})
            else:
                warnings.append(message)

        checkpoint_mode = "off"
        if session.persisted:  # an in-memory session records no checkpoints (nor loads them)
            from ama.checkpoints.tracker import default_mode

            explicit = getattr(config, "values", {}).get("checkpoints.mode")
            checkpoint_mode = default_mode(explicit, sandbox_bash=config.get("sandbox.bash"))
        if checkpoint_mode != "off":
            from ama.checkpoints import CheckpointTracker

            tracker = CheckpointTracker(
                session=session,
                cwd=cwd,
                data_dir=data_dir,
                mode=checkpoint_mode,
                max_file_bytes=config.get("checkpoints.maxFileBytes"),
                keep=config.get("checkpoints.keep"),
                notify=notify,
            )
        parts = AgentParts(
            registry=registry,
            permissions=permissions,
            hooks=hooks if hooks.hooks else None,
            broker=opts.broker,
            bash_sandbox=sandbox,
            jobs=jobs,
            checkpoints=tracker,
            config=config,
            prompts=prompts,
            tasks=task_manager,
        )
        settings = AgentSettings(
            output_dir=output_dir,
            thinking_level=draft.thinking_level,
            system_prompt=opts.system_prompt
            if opts.system_prompt is not None
            else build_system_prompt(cwd, extra=prompts.system_prompt_section() or None),
            limits=draft.limits,
            fallback_model=draft.fallback_model,
            max_attempts=config.get("retry.maxAttempts"),
            retry_base_s=config.get("retry.baseDelayMs") / 1000,
            request_timeout_s=config.get("retry.timeoutMs") / 1000,
            explicit_mode=opts.permission_mode is not None,
        )
        agent = AgentSession(session=session, model=draft.model, tools=tools, parts=parts, settings=settings)
        from ama.agent.auto_classifier import from_config

        permissions.classifier = from_config(agent, config)  # auto mode's last layer
        if session.entries:  # resumed: the files it read are known again (resume_reads)
            from ama.agent.resume_reads import rebuild_read_files

            rebuild_read_files(agent.read_files, session.branch(), cwd)
    except BaseException:
        session.close()
        raise
    holder.append(agent)
    if task_manager is not None:
        task_manager.attach(agent)
        warnings += task_manager.warnings
    return agent, warnings
