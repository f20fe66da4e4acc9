"""More places where a command line runs code the reader must read (called by ``_shell``):

- shell functions and aliases defined in the same text, expanded where they are called;
- git aliases (``git -c alias.x=…``, ``git config alias.x …``) and config values git runs;
- what a shell or interpreter reads on stdin: a heredoc, a here-string or ``echo … |`` is
  read as a script; any other input (a pipe, ``< file``, ``<(…)``) is marked ``runs_input``;
- inline interpreter code (``python3 -c``, ``perl -e``, ``awk 'system(…)'``) and the shell
  commands it starts.

``scripts(cmd, prev, analysis)`` returns the extra script texts to read as nested commands.
"""

from __future__ import annotations

import codecs
import os
import re
import shlex
from typing import TYPE_CHECKING

from ama.permissions import _git
from ama.permissions._interp import inline_code, reads_stdin_code, scan
from ama.permissions._wrappers import SHELLS, reads_stdin_script

if TYPE_CHECKING:
    from ama.permissions._shell import Analysis, Command

_FUNC = re.compile(
    r"(?:(?<=^)|(?<=[\s;&|(){}]))(?:function\s+([A-Za-z_][\w.:-]*)\s*(?:\(\s*\))?|([A-Za-z_][\w.:-]*)\s*\(\s*\))\s*\{"
)
_POSITIONAL = re.compile(r'"\$(?:@|\*|\{[@*]\})"|\$(?:@|\*|\{[@*]\})|"\$\{?([1-9])\}?"|\$\{?([1-9])\}?')
_UNTRUSTED = ("<<", "#", "`", "$(", "${", "\\", "$'", '$"')
_AWK_STR = r'("(?:[^"\\]|\\.)*")'
_AWK_PRINT_PIPE = re.compile(r"\bprintf?\b[^;{}]*?(?<!\|)\|&?(?!\|)\s*(?:" + _AWK_STR + r"|([A-Za-z_]\w*))")
_AWK_GETLINE = re.compile(r"(?:" + _AWK_STR + r"|([A-Za-z_]\w*))\s*\|&?\s*getline")
_AWKS = frozenset({"awk", "gawk", "mawk", "nawk"})


def record_functions(text: str, functions: dict[str, str]) -> None:
    """Record the text of ``name() { body }`` definitions, for expansion where they are called.

    The reader still tokenizes the whole text; it marks the commands of a body it reads as a
    definition (``Command.function``), and the table skips those only when the body recorded
    here is trustworthy (``function_body``): a body with a heredoc, a comment, a substitution,
    a backslash or ANSI quoting (where a text scan and the reader could disagree on where it
    ends) is judged where it stands."""
    if "(" not in text and "function" not in text:
        return
    for m in _FUNC.finditer(text):
        end = _closing_brace(text, m.end())
        if end is not None:
            functions.setdefault(m.group(1) or m.group(2), text[m.end() : end])


def function_body(name: str, functions: dict[str, str]) -> str | None:
    body = functions.get(name)
    if body is None or any(t in body for t in _UNTRUSTED):
        return None
    return body


def _closing_brace(text: str, i: int) -> int | None:
    depth = 1
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c in "'\"":
            j = text.find(c, i + 1) if c == "'" else _dq_end(text, i)
            if j < 0:
                return None
            i = j + 1
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None


def _dq_end(text: str, i: int) -> int:
    j = i + 1
    while j < len(text):
        if text[j] == "\\":
            j += 2
        elif text[j] == '"':
            return j
        else:
            j += 1
    return -1


def _quoted(args: list[str]) -> str:
    return " ".join(shlex.quote(a) for a in args)


def _with_args(body: str, args: list[str]) -> str:
    def sub(m: re.Match[str]) -> str:
        if m.group(1) or m.group(2):
            k = int(m.group(1) or m.group(2))
            return shlex.quote(args[k - 1]) if k <= len(args) else "''"
        return _quoted(args)

    return _POSITIONAL.sub(sub, body)


def literal_output(cmd: Command) -> str | None:
    """What ``echo`` / ``printf`` with literal words print, else None."""
    if cmd.name not in ("echo", "printf") or cmd.redirects or any("$" in a or "`" in a for a in cmd.inner):
        return None
    args = cmd.inner[1:]
    if cmd.name == "echo":
        flags = ""
        while args and re.fullmatch(r"-[neE]+", args[0]):
            flags += args[0]
            args = args[1:]
        text = " ".join(args)
        text = _unescape(text) if "e" in flags else text
        return text if "n" in flags else text + "\n"
    if not args:
        return None
    fmt = args[0]
    if re.search(r"%[^%]", fmt.replace("%%", "")):
        if fmt.replace("\\n", "") in ("%s", "%b"):
            return _unescape(" ".join(args[1:])) + "\n"
        return None
    return _unescape(fmt.replace("%%", "%"))


def _unescape(text: str) -> str:
    try:
        return codecs.escape_decode(text.encode("utf-8", "surrogateescape"))[0].decode("utf-8", "replace")
    except ValueError:
        return text


def _input(cmd: Command, prev: Command | None) -> tuple[str | None, str | None]:
    """(literal text on stdin, description of non-literal input) of ``cmd``."""
    for op, target in cmd.redirects:
        if op in ("<", "<>") and target != "/dev/null":
            return None, f"input from `{target}`"
    if prev is not None:
        text = literal_output(prev)
        if text is None:
            return None, f"the output of `{prev.text}`"
        return text, None
    if any(a.startswith("<(") for a in cmd.inner[1:]):
        return None, "a process substitution"
    return cmd.feed, None


def _awk(cmd: Command, prev: Command | None) -> list[str]:
    args, prog, i = cmd.inner[1:], None, 0
    while i < len(args):
        a = args[i]
        if a in ("-F", "-v", "-f"):
            if a == "-f":
                return []
            i += 2
            continue
        if a.startswith("-") and a != "-":
            i += 1
            continue
        prog = a
        break
    if prog is None:
        return []
    out = []
    for m in re.finditer(r'\bsystem\s*\(\s*("(?:[^"\\]|\\.)*")?\s*(\))?', prog):
        if m.group(1) and m.group(2):
            out.append(_unescape(m.group(1)[1:-1]))
        else:
            cmd.runs_input = cmd.runs_input or "awk's system() of text built at run time"
    pipes = [(m.group(1), m.group(2)) for m in _AWK_PRINT_PIPE.finditer(prog)]
    pipes += [(m.group(1), m.group(2)) for m in _AWK_GETLINE.finditer(prog)]
    for literal, name in pipes:
        target = _unescape(literal[1:-1]) if literal else ""
        first = target.split()[0] if target.split() else ""
        if (
            name
            or os.path.basename(first) in SHELLS
            or (inline_code([first]) is None and reads_stdin_code([first]))
        ):
            cmd.runs_input = cmd.runs_input or "awk piping text to a shell or a command built at run time"
        else:
            out.append(target)
    return out


def _git_scripts(cmd: Command, result: Analysis) -> list[str]:
    opts, sub, args = _git.split(cmd.inner)
    out = []
    for key, value in _git.config_pairs(opts):
        if key.startswith("alias."):
            result.git_aliases[key[6:]] = value
        if _git.runs_value(key) and value and (not key.startswith("alias.") or value.startswith("!")):
            out.append(value.lstrip("!"))
    pair = _git.config_set(sub, args)
    if pair is not None:
        key, value = pair
        if key.startswith("alias."):
            result.git_aliases[key[6:]] = value
        if _git.runs_value(key) and (not key.startswith("alias.") or value.startswith("!")):
            out.append(value.lstrip("!"))
    alias = result.git_aliases.get(sub)
    if alias is not None and ("git:" + sub) not in result.expanding:
        result.expanding.add("git:" + sub)
        if alias.startswith("!"):
            out.append(alias[1:] + " " + _quoted(args))
        else:
            out.append(" ".join(["git", _quoted(opts), alias, _quoted(args)]))
    return out


def scripts(cmd: Command, prev: Command | None, result: Analysis) -> tuple[list[str], set[str]]:
    """(scripts to read nested, names now being expanded: the caller discards them after)."""
    before = set(result.expanding)
    out = _scripts(cmd, prev, result)
    return out, result.expanding - before


def _scripts(cmd: Command, prev: Command | None, result: Analysis) -> list[str]:
    out: list[str] = []
    inner = cmd.inner
    if not inner:
        return out
    name = cmd.name
    if inner[0] == "alias":
        for a in inner[1:]:
            key, eq, value = a.partition("=")
            if eq:
                result.aliases[key] = value
                out.append(value)
    elif inner[0] in result.functions and inner[0] not in result.expanding:
        result.expanding.add(inner[0])
        out.append(_with_args(result.functions[inner[0]], inner[1:]))
    elif inner[0] in result.aliases and inner[0] not in result.expanding:
        result.expanding.add(inner[0])
        out.append(result.aliases[inner[0]] + " " + _quoted(inner[1:]))
    if inner[0] == "trap" and len(inner) > 2 and not inner[1].startswith("-"):
        out.append(inner[1])  # trap 'cmd' EXIT runs cmd later in this shell
    if name == "git":
        out += _git_scripts(cmd, result)
    if name in _AWKS or (name == "busybox" and inner[1:2] and inner[1] in _AWKS):
        out += _awk(cmd, prev)
    code = inline_code(inner)
    if reads_stdin_script(inner) or (code is None and reads_stdin_code(inner)):
        text, other = _input(cmd, prev)
        if other is not None:
            cmd.runs_input = other
        elif text is not None and reads_stdin_script(inner):
            out.append(text)
        elif text is not None:
            code = text
    if code is not None:
        cmd.code = code
        cmd.scan = scan(code)
        out += cmd.scan.shell
    return out
