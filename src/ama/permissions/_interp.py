"""Inline interpreter code (``python3 -c``, ``perl -e``, ``node -e``, ``ruby -e``, ...): what it runs.

``inline_code(argv)`` is the code an interpreter command line carries; ``scan(code)`` finds,
by pattern (no parsing of the language):

- shell commands it starts with a literal string (``os.system("rm -rf ~")``, backticks,
  ``execSync('…')``): the reader reads those as scripts, so the whole table applies;
- shell commands, ``exec``/``eval`` or deletions whose argument is built at run time: the
  reader cannot tell what runs, so the call asks;
- deletions of literal paths (``shutil.rmtree('/')``) and writes naming a literal path;
- code that both fetches from the network and executes something (download-then-run).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

INTERPRETERS = frozenset(
    {"python", "python2", "python3", "pypy", "pypy3", "perl", "ruby", "node", "nodejs", "deno", "bun", "php",
     "lua", "luajit", "tclsh", "Rscript", "osascript", "jshell", "irb"}
)  # fmt: skip
_CODE_FLAGS = {"python": "c", "perl": "eE", "ruby": "e", "node": "ep", "php": "r", "lua": "e", "bun": "e",
               "tclsh": "", "Rscript": "e", "osascript": "e", "deno": ""}  # fmt: skip
_LONG_CODE = ("--eval", "--print", "--command")
#: options that take the next word as their value (not a script operand)
_VALUE_OPTS = {"python": ("-X", "-W", "-Q"), "perl": ("-I", "-M", "-m", "-x"), "node": ("-r", "--require", "--import",
               "--loader", "-C"), "ruby": ("-I", "-r", "-C", "-E"), "php": ("-c", "-d", "-z"), "lua": ("-l",)}  # fmt: skip


def family(name: str) -> str:
    if re.match(r"^(python|pypy)[\d.]*$", name):
        return "python"
    if name == "nodejs":
        return "node"
    if name == "luajit":
        return "lua"
    return name if name in INTERPRETERS else ""


def inline_code(argv: list[str]) -> str | None:
    """The code of ``python3 -c CODE``, ``perl -ne CODE``, ``node --eval=CODE``, ``deno eval CODE``."""
    if not argv:
        return None
    fam = family(os.path.basename(argv[0]))
    if not fam:
        return None
    args = argv[1:]
    if fam == "deno" and args[:1] == ["eval"] and len(args) > 1:
        return args[1]
    letters = _CODE_FLAGS.get(fam, "e")
    values = _VALUE_OPTS.get(fam, ())
    skip = False
    for k, a in enumerate(args):
        if skip:
            skip = False
            continue
        if a in values:
            skip = True
            continue
        if fam == "python" and a == "-m":
            return None  # the module's own arguments follow
        if a.startswith(_LONG_CODE):
            if "=" in a:
                return a.split("=", 1)[1]
            return args[k + 1] if k + 1 < len(args) else None
        if a.startswith("-") and not a.startswith("--") and len(a) > 1:
            if letters and a[-1] in letters:
                return args[k + 1] if k + 1 < len(args) else None
            if fam == "python" and "c" in a[1:]:  # -c glued: python3 -c'code' reads as -c + code
                j = a.index("c", 1)
                return a[j + 1 :] or (args[k + 1] if k + 1 < len(args) else None)
            continue
        return None  # a script operand: code in a file
    return None


def reads_stdin_code(argv: list[str]) -> bool:
    """An interpreter that reads its program from stdin: ``python3``, ``python -``, ``perl``, ``node -``."""
    if not argv or not family(os.path.basename(argv[0])) or inline_code(argv) is not None:
        return False
    values = _VALUE_OPTS.get(family(os.path.basename(argv[0])), ())
    args, skip = [], False
    for a in argv[1:]:
        if skip:
            skip = False
        elif a in values:
            skip = True
        elif a == "-m":
            return False
        elif not (a.startswith("-") and a != "-"):
            args.append(a)
    return not args or args[0] in ("-", "/dev/stdin")


# --- scanning ---------------------------------------------------------------------------


class _Lazy:
    """A pattern compiled on first use: most commands carry no interpreter code, so the
    start-up of every ama process should not pay for these."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._args = (pattern, flags)
        self._rx: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:
        if self._rx is None:
            self._rx = re.compile(*self._args)
        return getattr(self._rx, name)


_STR = _Lazy(r"""[rbuf]{0,2}("""
                  r"""'''.*?'''|\"\"\".*?\"\"\"|'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*")""", re.S)  # fmt: skip
_SHELL_CALLS = _Lazy(
    r"(?:\bos\.(?:system|popen|exec\w*|spawn\w*)|\bsubprocess\.\w+|\bcommands\.getoutput|\bpty\.spawn"
    r"|\b(?:execSync|execFileSync|spawnSync|execFile)|(?<![\w.])(?:spawn|exec|system|shell_exec|passthru|popen|proc_open)"
    r"|\.(?:exec|spawn)"
    r"|\bIO\.popen|\bOpen3\.\w+|\bos\.execute|\bio\.popen|\bKernel\.(?:system|exec|spawn)|\bqx)\s*[(\s{]"
)
_EVAL_CALLS = _Lazy(r"(?<![\w.])(?:eval|exec|compile|Function|instance_eval|class_eval|loadstring|load)\s*\(")
_DELETE_CALLS = _Lazy(
    r"(?:\bshutil\.rmtree|\brmtree|\bos\.(?:remove|unlink|rmdir|removedirs)|\bremove_tree|(?:\bfs)?\.(?:rmSync|rmdirSync|unlinkSync)|\bfs\.(?:rm|rmdir|unlink)"
    r"|\bFileUtils\.(?:rm_rf|rm_r|rm|remove_dir|remove_entry\w*)|\bFile\.delete|\bDir\.delete"
    r"|\bunlink|\brmdir|\bos\.remove)\s*[(\s]"
)
_WRITE_HINT = _Lazy(
    r"""open\s*\(.*?,\s*['"][wax+]|write_text|write_bytes|writeFile|appendFile|File\.write|"""
    r"""open\s*\(\s*\w+\s*,\s*['"]>|>>|\bprint\s+\w+\s|fputs|file_put_contents|io\.open\(.*?['"][wa]""",
    re.S,
)
_NET = _Lazy(
    r"urlopen|urllib|\brequests\.|http\.client|httpx|\bsocket\b|\bfetch\s*\(|https?\.get|\bLWP\b|HTTP::Tiny"
    r"|Net::HTTP|open-uri|URI\.open|Invoke-WebRequest|\bcurl\b|\bwget\b|XMLHttpRequest|\baxios\b"
)
_EXECUTES = _Lazy(
    r"\b(?:exec|compile|Function|system|popen|spawn|execSync|instance_eval|loadstring|load)\s*\(|\beval\b|"
    r"\bsubprocess\b|child_process|\bos\.system|`"
)
_Q = _Lazy("'''.*?'''|\"\"\".*?\"\"\"|" + r"'(?:\\.|[^'\\])*'" + "|" + r'"(?:\\.|[^"\\])*"', re.S)
_KWARG = _Lazy(r"\b\w+\s*=\s*(?:True|False|None|\d+|\w+)\b")


@dataclass
class CodeScan:
    shell: list[str] = field(default_factory=list)  # literal shell command strings it starts
    dynamic: list[str] = field(default_factory=list)  # what it runs / deletes that is built at run time
    deletes: list[str] = field(default_factory=list)  # literal paths it deletes
    literals: list[str] = field(default_factory=list)  # string literals when the code writes files
    net_exec: bool = False  # fetches from the network and executes something


def _mask(code: str) -> str:
    """``code`` with the insides of string literals blanked (same length), so patterns skip them."""
    return _Q.sub(lambda m: m.group(0)[0] + " " * (len(m.group(0)) - 2) + m.group(0)[-1], code)


def _argument(code: str, masked: str, start: int) -> str:
    """The text of a call's argument list starting at ``code[start]`` (balanced, quotes skipped)."""
    opener = masked[start - 1] if start > 0 else "("
    if opener not in "({":
        ends = [e for e in (masked.find(";", start), masked.find("\n", start)) if e >= 0]
        return code[start - 1 : min(ends) if ends else len(code)]
    close = ")" if opener == "(" else "}"
    depth = 1
    for i in range(start, len(masked)):
        if masked[i] == opener:
            depth += 1
        elif masked[i] == close:
            depth -= 1
            if depth == 0:
                return code[start:i]
    return code[start:]


def _literal_args(arg: str) -> list[str] | None:
    """The string literals of an argument list, or None when anything else builds it."""
    parts, rest, pos = [], [], 0
    for m in _STR.finditer(arg):
        rest.append(arg[pos : m.start()])
        prefix = arg[m.start() : m.start(1)]
        body = m.group(1)
        body = body[3:-3] if body[:3] in ("'''", '"""') else body[1:-1]
        if "f" in prefix.lower() and "{" in body:
            return None
        if m.group(1)[0] == '"' and re.search(r"[$#]\{|\$\w", body):  # perl/ruby/php interpolation
            return None
        parts.append(body.encode("utf-8", "surrogateescape").decode("unicode_escape", "replace"))
        pos = m.end()
    rest.append(arg[pos:])
    leftover = _KWARG.sub("", "".join(rest))
    if re.sub(r"[\s,\[\]();]", "", leftover):
        return None
    return parts


def scan(code: str, depth: int = 0) -> CodeScan:
    out = CodeScan()
    masked = _mask(code)
    for m in _SHELL_CALLS.finditer(masked):
        arg = _argument(code, masked, m.end())
        lits = _literal_args(arg)
        if lits is None or not lits:
            out.dynamic.append(f"starts a command built at run time ({m.group(0).strip()}…)")
        else:
            out.shell.append(" ".join(lits))
    for m in re.finditer(r"`([^`]*)`", code if "`" in masked else ""):  # perl / ruby backticks
        if re.search(r"[$#]\{|\$\w", m.group(1)):
            out.dynamic.append("starts a command built at run time (`…`)")
        else:
            out.shell.append(m.group(1))
    for m in _EVAL_CALLS.finditer(masked):
        lits = _literal_args(_argument(code, masked, m.end()))
        if lits is None or depth > 3:
            out.dynamic.append(f"evaluates code built at run time ({m.group(0).strip()}…)")
        else:
            for lit in lits:
                sub = scan(lit, depth + 1)
                out.shell += sub.shell
                out.dynamic += sub.dynamic
                out.deletes += sub.deletes
    for m in _DELETE_CALLS.finditer(masked):
        lits = _literal_args(_argument(code, masked, m.end()))
        if lits is None or not lits:
            out.dynamic.append(f"deletes a path built at run time ({m.group(0).strip()}…)")
        else:
            out.deletes.extend(lits)
    if _WRITE_HINT.search(code):
        out.literals = [m.group(1)[1:-1] for m in _STR.finditer(code) if len(m.group(1)) > 2]
    out.net_exec = bool(_NET.search(code)) and bool(_EXECUTES.search(code))
    return out
