"""``ama config``: list, get, set and unset configuration keys."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from ama.cli.util import print_json
from ama.errors import AmaError, InvalidArguments


def build_parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Show and change configuration: the user file ($XDG_CONFIG_HOME/ama/config.json or "
        "$AMA_HOME/config.json) and the project file (.ama/config.json, only keys a project may set).",
    )
    sub = parser.add_subparsers(metavar="COMMAND")
    p = sub.add_parser(
        "list", help="the config files read, then every key with its value, source, default and description"
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=config_list)
    p = sub.add_parser("get", help="the effective value of one key")
    p.add_argument("key")
    p.add_argument("--json", action="store_true", help="print the value as JSON")
    p.set_defaults(func=config_get)
    for name, func, text in (
        ("set", config_set, "set a key (VALUE is parsed as JSON when it is valid JSON, else taken as a string; "
         "model must be one the registry knows)"),
        ("unset", config_unset, "remove a key from the file"),
    ):
        p = sub.add_parser(name, help=text, description=text)
        p.add_argument("key")
        if name == "set":
            p.add_argument("value")
        p.add_argument("--project", action="store_true", help="write .ama/config.json of the current directory")
        p.set_defaults(func=func)
    return parser


def _key(name: str) -> Any:
    from ama.config.schema import KEYS

    key = KEYS.get(name)
    if key is None:
        close = [k for k in KEYS if name.split(".")[-1].lower() in k.lower()]
        hint = f" (did you mean {', '.join(close[:3])}?)" if close else ""
        raise InvalidArguments(f"unknown config key {name!r}{hint}; see 'ama config list'")
    return key


def config_list(args: argparse.Namespace) -> int:
    from ama.config.loader import load_config
    from ama.config.schema import KEYS

    cfg = load_config(os.getcwd())
    rows = []
    for name, key in KEYS.items():
        rows.append(
            {
                "key": name,
                "value": cfg.get(name),
                "source": cfg.sources.get(name, "default"),
                "default": key.default,
                "type": key.type,
                "project": key.project if isinstance(key.project, str) else "tighten only",
                "description": key.description,
            }
        )
    _warn(cfg)
    if args.json:
        print_json({"keys": rows, "files": cfg.files, "warnings": cfg.warnings})
        return 0
    for path, state in cfg.files.items():
        print(f"# {path} ({_FILE_STATES[state]})")
    for r in rows:
        value = json.dumps(r["value"], ensure_ascii=False)
        src = "" if r["source"] == "default" else f"   ({r['source']})"
        print(f"{r['key']} = {value}{src}")
        print(f"    {r['description']} Default: {json.dumps(r['default'])}. Type: {r['type']}.")
    return 0


_FILE_STATES = {"read": "read", "missing": "not there", "ignored": "ignored: see the warning"}


def _warn(cfg: Any) -> None:
    """Configuration problems go to stderr, as the agent reports them (values fell back)."""
    for w in cfg.warnings:
        print(f"ama: warning: {w}", file=sys.stderr)


def config_get(args: argparse.Namespace) -> int:
    from ama.config.loader import load_config

    _key(args.key)
    cfg = load_config(os.getcwd())
    _warn(cfg)
    value = cfg.get(args.key)
    if args.json or not isinstance(value, str):
        print(json.dumps(value, ensure_ascii=False))
    else:
        print(value)
    return 0


def _target(args: argparse.Namespace) -> Path:
    from ama.config import paths
    from ama.config.loader import PROJECT_FILE

    return Path(os.getcwd()) / PROJECT_FILE if args.project else paths.user_config_path()


def _load(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as e:
        raise AmaError("corrupt", f"{path} is not valid JSON (line {e.lineno}); fix it by hand first") from None
    if not isinstance(data, dict):
        raise AmaError("corrupt", f"{path} must hold a JSON object; fix it by hand first")
    return data


def _save(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _nested_set(data: dict[str, Any], name: str, value: Any) -> None:
    from ama.config.schema import OBJECT_KEYS

    if name in data or name in OBJECT_KEYS or "." not in name:
        data[name] = value
        return
    head, rest = name.split(".", 1)
    child = data.setdefault(head, {})
    if not isinstance(child, dict):
        raise AmaError("corrupt", f"{head} in the config file is not an object; fix it by hand first")
    _nested_set(child, rest, value)  # permissions.classifier.model: three levels


def _nested_unset(data: dict[str, Any], name: str) -> bool:
    if name in data:
        del data[name]
        return True
    head, _, rest = name.partition(".")
    child = data.get(head)
    if isinstance(child, dict) and rest and _nested_unset(child, rest):
        if not child:
            del data[head]
        return True
    return False


def config_set(args: argparse.Namespace) -> int:
    from ama.config.loader import check_value

    key = _key(args.key)
    try:
        value: Any = json.loads(args.value)
    except json.JSONDecodeError:
        value = args.value
    if key.type == "str" and not isinstance(value, str):
        value = args.value
    err = check_value(key, value)
    if err:
        raise InvalidArguments(f"{args.key} {err}")
    if args.project and (key.project == "no" or (callable(key.project) and not key.project(key.default, value))):
        raise InvalidArguments(f"a project may not set {args.key} to {value!r}")
    path = _target(args)
    data = _load(path)
    if args.key == "model" and isinstance(value, str):
        _check_model(value)
    _nested_set(data, args.key, value)
    _save(path, data)
    print(f"{args.key} = {json.dumps(value, ensure_ascii=False)}  ({path})")
    return 0


def _check_model(ref: str) -> None:
    """Refuse a model the registry does not know (the same did-you-mean as ``--model``)."""
    from ama.ai.registry import ModelRegistry
    from ama.config.loader import load_config

    ModelRegistry.load(load_config(os.getcwd())).get(ref)


def config_unset(args: argparse.Namespace) -> int:
    _key(args.key)
    path = _target(args)
    data = _load(path)
    if _nested_unset(data, args.key):
        _save(path, data)
        print(f"removed {args.key} from {path}")
    else:
        print(f"{args.key} is not set in {path}")
    return 0
