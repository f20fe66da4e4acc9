"""Load and merge configuration: defaults < user file < project file < environment.

Bad input never crashes and never loses anything: an unreadable or invalid file, an
unknown key, a value of the wrong type, or a project key a project may not set is
reported in ``Config.warnings`` (with the file and the offending key) and ignored.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ama.config import paths
from ama.config.schema import KEYS, OBJECT_KEYS, Key

PROJECT_FILE = Path(".ama") / "config.json"

#: list keys where a project's value is appended to the user's instead of replacing it
MERGED_KEYS = frozenset({"permissions.deny", "permissions.ask"})

#: environment variable -> (key, value mapping)
ENV_OVERRIDES: dict[str, str] = {
    "AMA_SANDBOX": "sandbox.enabled",
    "AMA_CHECKPOINTS": "checkpoints.mode",
    "AMA_MODEL": "model",
    "AMA_PERMISSION_MODE": "permissionMode",
}


class Config:
    """The merged configuration: ``values`` by dotted key and the file each came from, the
    ``warnings`` of loading it, and each config file looked at (``files``: "read", "missing",
    or "ignored" when unreadable or not an object).  (A plain class, not a dataclass: every
    start makes one, RPC's first answer included.)"""

    __slots__ = ("values", "sources", "warnings", "files")

    def __init__(
        self,
        values: dict[str, Any] | None = None,
        sources: dict[str, str] | None = None,
        warnings: list[str] | None = None,
        files: dict[str, str] | None = None,
    ) -> None:
        self.values: dict[str, Any] = {} if values is None else values
        self.sources: dict[str, str] = {} if sources is None else sources
        self.warnings: list[str] = [] if warnings is None else warnings
        self.files: dict[str, str] = {} if files is None else files

    def __repr__(self) -> str:
        return f"Config(values={self.values!r}, warnings={self.warnings!r})"

    def get(self, key: str, default: Any = None) -> Any:
        if key in self.values:
            return self.values[key]
        k = KEYS.get(key)
        return k.default if k is not None else default


def flatten(obj: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in obj.items():
        name = f"{prefix}{k}"
        if isinstance(v, dict) and name not in OBJECT_KEYS:
            out.update(flatten(v, name + "."))
        else:
            out[name] = v
    return out


def check_value(key: Key, value: Any) -> str | None:
    """An error message if ``value`` does not fit ``key``, else None."""
    t = key.type
    choices = key.choices()
    if choices is not None:
        return None if value in choices else f"must be one of {', '.join(choices)}, got {value!r}"
    ok = {
        "str": isinstance(value, str) or value is None,
        "int": isinstance(value, int) and not isinstance(value, bool) and value >= 0,
        "number": isinstance(value, int | float) and not isinstance(value, bool) and value >= 0,
        "bool": isinstance(value, bool),
        "float": isinstance(value, int | float) and not isinstance(value, bool) and 0 < value <= 1,
        "list[str]": isinstance(value, list) and all(isinstance(x, str) for x in value),
        "object": isinstance(value, dict),
    }.get(t, True)
    if not ok and t == "float":
        return f"must be a number greater than 0 and at most 1, got {value!r}"
    if ok and key.check is not None:
        return key.check(value)
    return None if ok else f"must be of type {t}, got {value!r}"


def read_file(path: Path, warnings: list[str]) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as e:
        warnings.append(f"{path}: cannot read ({e.strerror}); ignored")
        return {}
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as e:
        warnings.append(f"{path}: invalid JSON at line {e.lineno} column {e.colno}; file ignored")
        return {}
    if not isinstance(data, dict):
        warnings.append(f"{path}: top level must be a JSON object; file ignored")
        return {}
    return flatten(data)


def _read_noted(path: Path, cfg: Config) -> dict[str, Any]:
    before = len(cfg.warnings)
    data = read_file(path, cfg.warnings)
    cfg.files[str(path)] = "ignored" if len(cfg.warnings) > before else ("read" if path.exists() else "missing")
    return data


def load_config(cwd: str | os.PathLike[str] | None = None, *, user_path: Path | None = None) -> Config:
    cfg = Config()
    user_path = user_path or paths.user_config_path()
    user = _read_noted(user_path, cfg)
    for name, value in user.items():
        key = KEYS.get(name)
        if key is None:
            cfg.warnings.append(f"{user_path}: unknown key {name!r}; ignored")
            continue
        err = check_value(key, value)
        if err:
            cfg.warnings.append(f"{user_path}: {name} {err}; ignored")
            continue
        cfg.values[name] = value
        cfg.sources[name] = str(user_path)
    if cwd is not None:
        project_path = Path(cwd) / PROJECT_FILE
        project = _read_noted(project_path, cfg)
        for name, value in project.items():
            key = KEYS.get(name)
            if key is None:
                cfg.warnings.append(f"{project_path}: unknown key {name!r}; ignored")
                continue
            err = check_value(key, value)
            if err:
                cfg.warnings.append(f"{project_path}: {name} {err}; ignored")
                continue
            allowed = key.project
            if allowed == "no" or (callable(allowed) and not allowed(cfg.get(name), value)):
                cfg.warnings.append(f"{project_path}: a project may not set {name} to {value!r}; ignored")
                continue
            if name in MERGED_KEYS:
                # a project adds rules; it never removes the user's
                value = [*cfg.get(name, []), *(v for v in value if v not in cfg.get(name, []))]
            cfg.values[name] = value
            cfg.sources[name] = str(project_path)
    for var, name in ENV_OVERRIDES.items():
        value = os.environ.get(var)
        if value is None or value == "":
            continue
        err = check_value(KEYS[name], value)
        if err:
            cfg.warnings.append(f"${var}: {err}; ignored")
            continue
        cfg.values[name] = value
        cfg.sources[name] = f"${var}"
    return cfg
