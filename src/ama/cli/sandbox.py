"""``ama sandbox``: show which OS sandbox works here, and try commands in it.

Imports stay light: the standard library, ``ama.sandbox``, ``ama.config`` and ``ama.errors``.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import sys

from ama.errors import AmaError, InvalidArguments

EXEC_USAGE = "ama sandbox exec [--network allow] [--writable PATH] -- CMD [ARG ...]"


def build_parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Show the OS sandbox ama uses for bash, and run commands under the bash tool's policy.",
        epilog="See docs/sandbox.md for what is isolated and the sandbox.* settings.",
    )
    sub = parser.add_subparsers(title="commands", metavar="COMMAND")

    p = sub.add_parser(
        "status",
        help="which sandbox works here, and the bash sandbox settings",
        description=inspect.cleandoc(sandbox_status.__doc__ or ""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--json", action="store_true", help="print a JSON object")
    p.set_defaults(func=sandbox_status)

    p = sub.add_parser(
        "exec",
        help="run a command in the sandbox, exactly as the bash tool would",
        description=inspect.cleandoc(sandbox_exec.__doc__ or ""),
        usage=EXEC_USAGE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--network",
        choices=["deny", "allow"],
        help="network inside the sandbox (default: the sandbox.network setting, normally deny)",
    )
    p.add_argument(
        "--writable",
        action="append",
        default=[],
        metavar="PATH",
        help="another writable directory, absolute or ~/... (repeatable; missing ones are ignored)",
    )
    p.add_argument("command", nargs=argparse.REMAINDER, help="the command and its arguments, after --")
    p.set_defaults(func=sandbox_exec)
    return parser


def _load(cwd: str):
    from ama.config.loader import load_config

    cfg = load_config(cwd)
    for warning in cfg.warnings:
        print(f"ama: warning: {warning}", file=sys.stderr)
    return cfg


def _dirs() -> tuple[str, str]:
    """(data dir, config dir)"""
    from ama.config import paths

    return str(paths.data_dir()), str(paths.config_dir())


def _cwd() -> str:
    try:
        return os.getcwd()
    except FileNotFoundError:
        raise InvalidArguments("the current directory no longer exists") from None


def _home_relative(path: str) -> str:
    home = os.path.expanduser("~").rstrip("/")
    return "~" + path[len(home) :] if home and (path == home or path.startswith(home + "/")) else path


def sandbox_status(args: argparse.Namespace) -> int:
    """Show which OS sandbox works on this machine (and why, when none does), and how the
    bash tool would use it with the current settings (user config, project config, env)."""
    from ama.sandbox import detect
    from ama.sandbox.bash import credential_paths, read_settings
    from ama.sandbox.secretfiles import workspace_secrets

    cwd = _cwd()
    cfg = _load(cwd)
    settings = read_settings(cfg)
    status = detect(enabled=settings.enabled)
    usable = status.kind in ("bwrap", "sandbox-exec") and status.restricts_writes
    active = settings.bash == "auto" and usable
    writable = [
        {"path": entry, "realpath": real, "exists": os.path.isdir(real)} for entry, real in settings.writable
    ]
    hidden = credential_paths(os.path.expanduser("~"), *_dirs())
    secrets = [os.path.relpath(p, cwd) for p in workspace_secrets(os.path.realpath(cwd), settings.allow_secrets)]
    if args.json:
        out = status.to_json()
        out["bash"] = {
            "setting": settings.bash,
            "active": active,
            "network": settings.network,
            "writable": writable,
            "unreadable": hidden,
            "workspaceSecrets": secrets,
            "allowSecrets": settings.allow_secrets,
            "maxProcesses": settings.max_processes,
            "env": settings.env_allow,
        }
        out["warnings"] = settings.warnings
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return 0
    yes = {True: "yes", False: "no"}
    print(f"sandbox:          {status.kind}" + (f" ({status.executable})" if status.executable else ""))
    print(f"isolates network: {yes[status.isolates_network]}")
    print(f"restricts writes: {yes[status.restricts_writes]}")
    print(f"why:              {status.explanation}")
    print()
    if active:
        print("bash sandbox:     on (sandbox.bash: auto)")
    elif settings.bash == "auto":
        print("bash sandbox:     off: sandbox.bash is auto, but no sandbox that restricts writes works here")
    else:
        print(
            'bash sandbox:     off (sandbox.bash: off; set "sandbox": {"bash": "auto"} in your user config)'
        )
    print(f"  network:        {settings.network}")
    extra = [f"{w['path']}" + ("" if w["exists"] else " (missing, ignored)") for w in writable]
    print("  writable:       " + ", ".join(["the workspace", "a private TMPDIR per session", *extra]))
    print("  read-only:      .ama/ and the git directory (.git, and where a gitdir:/commondir points)")
    print("  unreadable:     " + ", ".join(_home_relative(h) for h in hidden))
    print("  hidden here:    " + (", ".join(secrets) if secrets else "no secret files found in the workspace"))
    limit = settings.max_processes
    print(f"  processes:      at most {limit} per call" if limit else "  processes:      no limit")
    if settings.env_allow:
        print("  env passed:     " + ", ".join(settings.env_allow))
    print(f"  try it:         {EXEC_USAGE}")
    for warning in settings.warnings:
        print(f"ama: warning: {warning}", file=sys.stderr)
    return 0


def sandbox_exec(args: argparse.Namespace) -> int:
    """Run CMD in the current directory under exactly the bash tool's sandbox policy, so that
    you can try your sandbox.* settings.  Runs even when sandbox.bash is off.  The exit
    status and output are CMD's; ama's own errors go to stderr prefixed with "ama:".

    examples:
      ama sandbox exec -- touch /etc/x          # fails: read-only file system
      ama sandbox exec -- sh -c 'echo hi > out' # writes ./out
      ama sandbox exec --network allow -- curl -sI https://example.com"""
    from ama.sandbox import SandboxError, make_bash_sandbox, spawn
    from ama.sandbox.bash import expand_path, read_settings
    from ama.tools.bash_env import scrub_env

    command = args.command[1:] if args.command[:1] == ["--"] else list(args.command)
    if not command:
        raise InvalidArguments(f"missing command: {EXEC_USAGE}")
    for path in args.writable:
        if expand_path(path, os.path.expanduser("~")) is None:
            raise InvalidArguments(f"--writable needs an absolute path or ~/...: {path!r}")
    cwd = _cwd()
    cfg = _load(cwd)
    settings = read_settings(cfg)
    for warning in settings.warnings:
        print(f"ama: warning: {warning}", file=sys.stderr)
    config = {
        "sandbox.enabled": settings.enabled,
        "sandbox.bash": "auto",
        "sandbox.network": settings.network,
        "sandbox.writable": [entry for entry, _ in settings.writable],
        "sandbox.env": settings.env_allow,
    }
    try:
        data_dir, config_dir = _dirs()
        sandbox = make_bash_sandbox(config, cwd=cwd, data_dir=data_dir, config_dir=config_dir)
    except SandboxError as e:
        raise AmaError("sandbox_failed", str(e)) from None
    try:
        if not sandbox.active:
            raise AmaError(
                "sandbox_unavailable",
                f"no OS sandbox that restricts writes works here: {sandbox.status.explanation}",
            )
        for path in args.writable:
            real = os.path.realpath(expand_path(path, os.path.expanduser("~")) or path)
            if not os.path.isdir(real):
                print(f"ama: warning: --writable {path}: not an existing directory; ignored", file=sys.stderr)
        try:
            wrapped = sandbox.wrap_argv(command, cwd=cwd, network=args.network, extra_writable=args.writable)
        except SandboxError as e:
            raise AmaError("sandbox_failed", str(e)) from None
        try:
            # the value checks of the bash tool too (sandbox/ only drops names): a variable
            # whose value looks like a token never reaches the command
            env = scrub_env(wrapped.env, sandbox.env_allow, sandbox.env_deny)[0]
            proc = spawn(wrapped.argv, env=env, pass_fds=wrapped.pass_fds, cwd=cwd)
        except OSError as e:
            raise AmaError("sandbox_failed", f"cannot start {wrapped.argv[0]}: {e.strerror}") from None
        finally:
            wrapped.close()
        try:
            code = proc.wait()
        except BaseException:
            proc.kill()
            proc.wait()
            raise
    finally:
        sandbox.close()
    return code if code >= 0 else 128 - code
