"""The checks of ``ama doctor`` besides the index: Python, config, providers, data, tools,
sandbox.  Each returns ``{title, ok, lines, ...data}``.  No HTTP client is imported: the
providers section reads the model registry (names, keys, prices) only."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from typing import Any


def _config(args: argparse.Namespace) -> Any:
    cached = getattr(args, "_config", None)
    if cached is None:
        from ama.config.loader import load_config

        cached = args._config = load_config(os.getcwd())
    return cached


def section_python(args: argparse.Namespace) -> dict:
    import ama

    ok = sys.version_info >= (3, 11)
    lines = [
        f"Python {sys.version.split()[0]} at {sys.executable}" + ("" if ok else " (ama needs 3.11 or newer)"),
        f"ama {ama.__version__} from {os.path.dirname(ama.__file__)}",
    ]
    return {"title": "Python", "ok": ok, "lines": lines, "version": sys.version.split()[0], "ama": ama.__version__}


def section_config(args: argparse.Namespace) -> dict:
    from ama.config import paths
    from ama.config.loader import PROJECT_FILE

    cfg = _config(args)
    user = paths.user_config_path()
    project = os.path.join(os.getcwd(), PROJECT_FILE)
    lines = [
        f"user config: {user}" + ("" if user.exists() else " (none)"),
        f"project config: {project}" + ("" if os.path.exists(project) else " (none)"),
    ]
    lines += [f"warning: {w}" for w in cfg.warnings]
    return {"title": "Configuration", "ok": not cfg.warnings, "lines": lines, "warnings": cfg.warnings,
            "userConfig": str(user), "projectConfig": project}  # fmt: skip


def section_providers(args: argparse.Namespace) -> dict:
    from ama.ai.registry import ModelRegistry

    cfg = _config(args)
    reg = ModelRegistry.load(cfg)
    providers: dict[str, dict] = {}
    for m in reg.list():
        if m.provider == "scripted":
            continue
        p = providers.setdefault(m.provider, {"api": m.api, "baseUrl": m.base_url, "models": 0, "keySet": None})
        p["models"] += 1
        if p["keySet"] is None:
            env = m.api_key_env
            p["keyEnv"] = env
            p["keySet"] = bool(m.api_key or (env and os.environ.get(env)))
            p["needsKey"] = bool(getattr(m, "requires_key", True))
    lines = []
    for name, p in providers.items():
        if p["keySet"]:
            key = "key set"
        elif p.get("needsKey"):
            key = f"no key (set {p.get('keyEnv') or 'apiKey in the config'})"
        else:
            key = "no key needed"
        lines.append(f"{name}: {p['api']} {p['baseUrl']}, {p['models']} model(s), {key}")
    problems = [f"{k}: {msg}" for k, msgs in reg.errors.items() for msg in msgs]
    lines += [f"problem: {x}" for x in problems] + [f"warning: {w}" for w in reg.warnings]
    from ama.ai.models import DEFAULT_MODELS

    default = cfg.get("model") or next((m for env, m in DEFAULT_MODELS if os.environ.get(env)), None)
    if default:
        lines.append(f"default model: {default}")
    else:
        lines.append(
            "no default model: set one (ama config set model provider/id), set ANTHROPIC_API_KEY or "
            "OPENAI_API_KEY, or pass --model (try --model scripted/examples/demo.json)"
        )
    ok = not problems and bool(default)
    return {"title": "Models and providers", "ok": ok, "lines": lines, "providers": providers, "problems": problems}


def _dir_size(path: str) -> tuple[int, int]:
    files = size = 0
    for d, _dirs, names in os.walk(path):
        for n in names:
            try:
                size += os.lstat(os.path.join(d, n)).st_size
                files += 1
            except OSError:
                pass
    return files, size


def section_data(args: argparse.Namespace) -> dict:
    from ama.checkpoints import usage
    from ama.cli.util import human_size, sessions_dir
    from ama.config import paths
    from ama.session.layout import iter_session_files

    data = str(paths.data_dir())
    sessions = sessions_dir(args)
    n_sessions = sum(1 for _ in iter_session_files(sessions))
    n_trash = sum(1 for _ in iter_session_files(sessions, trash=True))
    _, sessions_bytes = _dir_size(sessions)
    fh = usage(data)
    writable = os.access(data, os.W_OK) if os.path.isdir(data) else os.access(os.path.dirname(data) or "/", os.W_OK)
    lines = [
        f"data: {data}" + ("" if os.path.isdir(data) else " (created on first use)"),
        f"config: {paths.config_dir()}",
        f"sessions: {sessions}: {n_sessions} session(s), {n_trash} in the trash, {human_size(sessions_bytes)}",
        f"file history: {fh['blobs']} backup(s), {human_size(fh['blobBytes'])}; {fh['shadowRepos']} shadow "
        f"repositor{'y' if fh['shadowRepos'] == 1 else 'ies'}, {human_size(fh['shadowBytes'])}",
    ]
    if not writable:
        lines.append(f"problem: {data} is not writable")
    return {"title": "Data", "ok": writable, "lines": lines, "dataDir": data, "sessions": n_sessions,
            "trash": n_trash, "sessionBytes": sessions_bytes, "fileHistory": fh}  # fmt: skip


def _version(cmd: str) -> str | None:
    try:
        out = subprocess.run([cmd, "--version"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    first = (out.stdout or out.stderr).strip().splitlines()
    return first[0] if first else ""


def section_tools(args: argparse.Namespace) -> dict:
    needed = {
        "git": "shadow-git checkpoints, git HEAD hints",
        "rg": "fast grep/find and the first pass of a search without the index (a Python fallback is used without it)",
        "bwrap": "the OS sandbox for bash on Linux",
    }
    lines, found = [], {}
    for cmd, why in needed.items():
        path = shutil.which(cmd)
        found[cmd] = path
        lines.append(f"{cmd}: {path} ({_version(cmd)})" if path else f"{cmd}: not found — used for {why}")
    return {"title": "Tools", "ok": True, "lines": lines, "tools": found}


def section_sandbox(args: argparse.Namespace) -> dict:
    from ama.sandbox import detect, summary_line

    cfg = _config(args)
    status = detect(enabled=cfg.get("sandbox.enabled"))
    bash = cfg.get("sandbox.bash")
    lines = [summary_line(status)]
    if bash == "auto":
        works = status.kind in ("bwrap", "sandbox-exec") and status.restricts_writes
        lines.append(
            f"sandbox.bash: auto — bash runs sandboxed (network {cfg.get('sandbox.network')})" if works
            else "sandbox.bash: auto, but no sandbox that restricts writes works here: bash runs unsandboxed"
        )  # fmt: skip
    else:
        lines.append("sandbox.bash: off (ama config set sandbox.bash auto to run bash in the sandbox)")
    return {"title": "Sandbox", "ok": True, "lines": lines, "status": status.to_json(), "bash": bash}
