"""A small POSIX-shell reader: enough structure to judge a command, never to run one.

``analyze(text)`` splits a command line into simple commands (on ``;``, ``&&``, ``||``,
``|``, ``&``, newlines and parentheses), removes quoting the way the shell does, and looks
inside the places where the shell runs more code: ``sh -c '…'`` / ``bash -c`` (and the
other shells), ``eval``, ``$(…)``, backticks and ``<(…)`` / ``>(…)``.  Every simple command
of every level lands in one flat list, each knowing its parent, its pipeline and its depth.

Why not :mod:`shlex` alone: ``shlex`` drops the quoting context, so ``"$(rm -rf /)"`` (runs)
and ``'$(rm -rf /)'`` (does not) come out the same, and it has no notion of heredocs or
process substitution.  This reader keeps that context; it is ~250 lines and tested with
the quoting tricks in ``tests/permissions``.

What it does not do: expand variables (except ``~`` / ``$HOME`` where callers ask), follow
``cd``, look into scripts that are files, or understand ``case`` patterns and functions
beyond splitting on their punctuation.  Anything it cannot read sets ``error``; nesting
deeper than ``MAX_DEPTH`` (or more than ``MAX_COMMANDS`` commands) sets ``too_deep``.
Callers treat both as "cannot tell": they ask.
"""

from __future__ import annotations

import codecs
import os
import re
from dataclasses import dataclass, field
from functools import cached_property

from ama.permissions import _expand
from ama.permissions._interp import CodeScan
from ama.permissions._wrappers import SHELLS, shell_script, unwrap, unwrap_full

__all__ = ["SHELLS", "Analysis", "Command", "ParseError", "analyze", "shell_script", "unwrap"]

#: Levels of ``sh -c`` / ``eval`` / ``$(…)`` nesting that are inspected; deeper asks.
MAX_DEPTH = 3
#: Simple commands inspected in one call; more asks.
MAX_COMMANDS = 500

# longest first
_OPERATORS = (
    ";;&", "&>>", "<<<", "<<-",
    "&&", "||", ";;", ";&", "|&", "&>", ">>", ">|", ">&", "<<", "<&", "<>",
    ";", "&", "|", "(", ")", "\n", "<", ">",
)  # fmt: skip
_REDIRECTS = frozenset({"&>>", "<<<", "<<-", "&>", ">>", ">|", ">&", "<<", "<&", "<>", "<", ">"})
_PIPES = frozenset({"|", "|&"})
_PARENS = frozenset({"(", ")"})


class ParseError(ValueError):
    pass


@dataclass
class Command:
    """One simple command.  ``argv`` has quoting removed; substitutions stay as written."""

    argv: list[str]
    redirects: list[tuple[str, str]] = field(default_factory=list)
    depth: int = 0
    parent: int | None = None  # index of the command whose word / -c script holds this one
    pipeline: int = 0  # commands joined by | share a pipeline id
    position: int = 0  # place within the pipeline
    inner: list[str] = field(default_factory=list)  # argv without assignments and wrappers
    wrappers: list[str] = field(default_factory=list)  # basenames of sudo, env, timeout, ...
    transparent: bool = False  # a pure ``sh -c`` / ``eval`` whose script was read as commands
    feed: str | None = None  # literal text on stdin: a heredoc, a here-string, ``echo … |``
    runs_input: str | None = None  # a shell / interpreter runs input the reader cannot see
    code: str | None = None  # inline interpreter code (``python3 -c``, ``perl -e``, fed to ``python -``)
    scan: CodeScan | None = None  # what ``code`` runs, deletes, writes
    function: str | None = None  # inside the body of this function's definition (judged where called)
    memo: dict[object, object] = field(default_factory=dict, repr=False, compare=False)  # checks' cache

    @property
    def text(self) -> str:
        """argv and redirections joined by single spaces (what rules match against)."""
        parts = list(self.argv) + [f"{op} {target}" for op, target in self.redirects]
        return " ".join(parts)

    @property
    def inner_text(self) -> str:
        return " ".join(self.inner)

    @cached_property
    def name(self) -> str:
        """Basename of the program actually run (``/bin/rm`` -> ``rm``)."""
        return os.path.basename(self.inner[0]) if self.inner else ""

    def words(self) -> list[str]:
        return list(self.argv) + [t for _op, t in self.redirects]


@dataclass
class Analysis:
    text: str
    commands: list[Command] = field(default_factory=list)
    scripts: list[str] = field(default_factory=list)  # every script text read, outermost first
    error: str | None = None
    too_deep: bool = False
    pipelines: int = 0  # pipeline ids handed out so far
    aliases: dict[str, str] = field(default_factory=dict)  # alias NAME=VALUE seen so far
    functions: dict[str, str] = field(default_factory=dict)  # NAME() { BODY } in the text
    git_aliases: dict[str, str] = field(default_factory=dict)  # git -c alias.X=… / git config alias.X …
    expanding: set[str] = field(default_factory=set)  # aliases / functions being expanded

    @property
    def ok(self) -> bool:
        return self.error is None and not self.too_deep


# --- lexer ------------------------------------------------------------------------------


@dataclass
class _Word:
    value: str
    subs: list[str]
    quoted: bool
    only_subs: bool = False  # substitutions of a heredoc body: no argv word
    body: str | None = None  # for a heredoc delimiter: the heredoc's text


def _skip_quoted(s: str, i: int) -> int:
    """Index just after the quoted string, parameter or substitution starting at ``s[i]``."""
    c = s[i]
    if c == "'":
        j = s.find("'", i + 1)
        if j < 0:
            raise ParseError("unterminated single quote")
        return j + 1
    if c == '"':
        j = i + 1
        while j < len(s):
            if s[j] == "\\":
                j += 2
            elif s[j] == '"':
                return j + 1
            elif s[j] == "`" or (s[j] == "$" and s.startswith(("$(", "${"), j)):
                j = _skip_quoted(s, j)
            else:
                j += 1
        raise ParseError("unterminated double quote")
    if c == "`":
        j = i + 1
        while j < len(s):
            if s[j] == "\\":
                j += 2
            elif s[j] == "`":
                return j + 1
            else:
                j += 1
        raise ParseError("unterminated backquote")
    # "$(", "${", "<(", ">(": balanced to the closing bracket
    close = "}" if s[i + 1] == "{" else ")"
    opener = s[i + 1]
    depth, j = 1, i + 2
    while j < len(s):
        ch = s[j]
        if ch == "\\":
            j += 2
            continue
        if ch in "'\"`" or (ch == "$" and s.startswith(("$(", "${"), j)):
            j = _skip_quoted(s, j)
            continue
        if ch == opener:
            depth += 1
        elif ch == close:
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    raise ParseError(f"unterminated {s[i : i + 2]}")


def _tokens(s: str) -> list[_Word | str]:
    """Words (quoting removed, substitutions collected) and operator strings."""
    out: list[_Word | str] = []
    buf: list[str] = []
    subs: list[str] = []
    in_word = quoted = False
    heredocs: list[tuple[_Word, bool, bool]] = []  # (delimiter, strip tabs, body expands)
    pending_heredoc: str | None = None
    i, n = 0, len(s)

    def flush() -> None:
        nonlocal buf, subs, in_word, quoted, pending_heredoc
        if in_word:
            word = _Word("".join(buf), subs, quoted)
            out.append(word)
            if pending_heredoc is not None:
                heredocs.append((word, pending_heredoc == "<<-", not quoted))
                pending_heredoc = None
        buf, subs, in_word, quoted = [], [], False, False

    while i < n:
        c = s[i]
        if c in " \t\r":
            flush()
            i += 1
        elif c == "\\":
            if s.startswith("\\\n", i):
                i += 2
                continue
            in_word = quoted = True
            buf.append(s[i + 1] if i + 1 < n else "")
            i += 2
        elif c == "'":
            j = _skip_quoted(s, i)
            buf.append(s[i + 1 : j - 1])
            in_word = quoted = True
            i = j
        elif s.startswith("$'", i):  # ANSI-C quoting: $'\x72m' is rm
            j = i + 2
            while j < n and s[j] != "'":
                j += 2 if s[j] == "\\" else 1
            if j >= n:
                raise ParseError("unterminated $' quote")
            buf.append(_ansi_c(s[i + 2 : j]))
            in_word = quoted = True
            i = j + 1
        elif _IFS.match(s, i):
            flush()  # rm${IFS}-rf${IFS}/ is three words
            i = _IFS.match(s, i).end()  # type: ignore[union-attr]
        elif c == '"' or s.startswith('$"', i):
            if c == "$":  # $"…" is a translated double-quoted string
                i += 1
            j = _skip_quoted(s, i)
            k = i + 1
            while k < j - 1:
                ch = s[k]
                if ch == "\\" and k + 1 < j - 1 and s[k + 1] in '$`"\\\n':
                    buf.append(s[k + 1] if s[k + 1] != "\n" else "")
                    k += 2
                elif ch == "`" or s.startswith("$(", k):
                    e = _skip_quoted(s, k)
                    if not s.startswith("$((", k):
                        subs.append(s[k + 1 : e - 1] if ch == "`" else s[k + 2 : e - 1])
                    buf.append(s[k:e])
                    k = e
                else:
                    buf.append(ch)
                    k += 1
            in_word = quoted = True
            i = j
        elif c == "`" or s.startswith(("$(", "${"), i) or (s.startswith(("<(", ">("), i)):
            j = _skip_quoted(s, i)
            if c == "`":
                subs.append(s[i + 1 : j - 1])
            elif not s.startswith(("${", "$(("), i):
                subs.append(s[i + 2 : j - 1])
            buf.append(s[i:j])
            in_word = True
            i = j
        elif c == "#" and not in_word:
            while i < n and s[i] != "\n":
                i += 1
        elif c in ";&|()\n<>":
            op = next(o for o in _OPERATORS if s.startswith(o, i))
            if op in _REDIRECTS and in_word and not quoted and "".join(buf).isdigit():
                buf, in_word = [], False  # "2>" : an fd number, not a word
            flush()
            out.append(op)
            i += len(op)
            if op in ("<<", "<<-"):
                pending_heredoc = op
            if op == "\n" and heredocs:
                i = _skip_heredocs(s, i, heredocs, out)
                heredocs = []
        else:
            buf.append(c)
            in_word = True
            i += 1
    flush()
    return out


_IFS = re.compile(r"\$(?:IFS(?![A-Za-z0-9_])|\{IFS\})")
_BRACES = re.compile(r"\{([^{}\s]*,[^{}\s]*)\}")


def _brace_expand(word: str) -> list[str]:
    """``{rm,-rf,/}`` -> rm -rf /; ``/{usr,etc}`` -> /usr /etc (first group only)."""
    m = _BRACES.search(word)
    if m is None or "$" in word[: m.start()]:
        return [word]
    return [word[: m.start()] + part + word[m.end() :] for part in m.group(1).split(",")]


def _ansi_c(body: str) -> str:
    try:
        return codecs.escape_decode(body.encode("utf-8", "surrogateescape"))[0].decode("utf-8", "replace")
    except ValueError:
        return body


def _skip_heredocs(s: str, i: int, heredocs: list[tuple[_Word, bool, bool]], out: list[_Word | str]) -> int:
    """Read heredoc bodies after a newline into their delimiter word; substitutions in
    expanding bodies become a word."""
    for word, strip_tabs, expands in heredocs:
        delim = word.value
        body: list[str] = []
        while i < len(s):
            end = s.find("\n", i)
            line = s[i:] if end < 0 else s[i:end]
            i = len(s) if end < 0 else end + 1
            if (line.lstrip("\t") if strip_tabs else line) == delim:
                break
            body.append(line)
        word.body = "".join(x + "\n" for x in body)
        if expands:
            text = "\n".join(body)
            subs = _substitutions(text)
            if subs:
                out.insert(len(out) - 1, _Word(text, subs, True, only_subs=True))
    return i


def _substitutions(text: str) -> list[str]:
    """``$(…)`` and backtick bodies in text that expands like a double-quoted string."""
    subs: list[str] = []
    k = 0
    try:
        while k < len(text):
            if text[k] == "\\":
                k += 2
            elif text[k] == "`" or (text.startswith("$(", k) and not text.startswith("$((", k)):
                e = _skip_quoted(text, k)
                subs.append(text[k + 1 : e - 1] if text[k] == "`" else text[k + 2 : e - 1])
                k = e
            else:
                k += 1
    except ParseError:
        pass
    return subs


# --- commands ---------------------------------------------------------------------------


def analyze(text: str, *, max_depth: int = MAX_DEPTH) -> Analysis:
    """Read ``text`` into simple commands at every nesting level (see module docstring)."""
    result = Analysis(text)
    _read(text, result, depth=0, parent=None, max_depth=max_depth)
    return result


def _read(text: str, result: Analysis, *, depth: int, parent: int | None, max_depth: int) -> None:
    if depth > max_depth:
        result.too_deep = True
        return
    result.scripts.append(text)
    _expand.record_functions(text, result.functions)
    try:
        tokens = _tokens(text)
    except ParseError as e:
        result.error = result.error or str(e)
        return
    result.pipelines += 1
    pipeline, position = result.pipelines, 0
    argv: list[str] = []
    redirects: list[tuple[str, str]] = []
    subs: list[str] = []
    feed: str | None = None
    pending: str | None = None
    last: Command | None = None  # the previous command of this pipeline, at this level
    braces = 0  # depth of { … } groups
    bodies: list[tuple[str, int]] = []  # (function name, brace depth of its body)
    defining: str | None = None  # a definition's name, until its "{"
    skip_close = False

    def read(script: str, index: int) -> None:
        _read(script, result, depth=depth + 1, parent=index, max_depth=max_depth)

    def finish() -> None:
        nonlocal argv, redirects, subs, feed, last
        words, redirs, nested, fed = argv, redirects, subs, feed
        argv, redirects, subs, feed = [], [], [], None
        if not (words or redirs or nested):
            return
        if len(result.commands) >= MAX_COMMANDS:
            result.too_deep = True
            return
        u = unwrap_full(words)
        inner, wrappers = u.inner, u.wrappers
        cmd = Command(words, redirs, depth, parent, pipeline, position, inner, wrappers, feed=fed)
        cmd.function = bodies[-1][0] if bodies else None
        prev = last if position > 0 and last is not None and last.position == position - 1 else None
        last = cmd
        result.commands.append(cmd)
        index = len(result.commands) - 1
        plain = not redirs and not wrappers and len(inner) == len(words)
        script = shell_script(inner)
        if script is None and inner and inner[0] == "eval":
            script = " ".join(inner[1:])
        if script is not None:
            cmd.transparent = plain
            read(script, index)
        if u.script is not None:
            read(u.script, index)
        extras, expanding = _expand.scripts(cmd, prev, result)
        for extra in extras:
            read(extra, index)
        result.expanding -= expanding
        for sub in nested:
            read(sub, index)

    for k, tok in enumerate(tokens):
        if isinstance(tok, _Word):
            subs.extend(tok.subs)
            if tok.only_subs:
                continue
            bare = not tok.quoted and pending is None and not argv
            if bare and tok.value == "function" and isinstance(tokens[k + 1 : k + 2] or None, list):
                nxt = tokens[k + 1]
                if isinstance(nxt, _Word) and not nxt.quoted:
                    defining = "\0"  # the next word is the name
                    continue
            if defining == "\0":
                defining = tok.value
                continue
            if bare and tok.value == "{":
                braces += 1
                if defining is not None:
                    bodies.append((defining, braces))
                    defining = None
            elif bare and tok.value == "}":
                if bodies and bodies[-1][1] == braces:
                    bodies.pop()
                braces = max(0, braces - 1)
            if pending is not None:
                redirects.append((pending, tok.value))
                if pending in ("<<", "<<-"):
                    feed = tok.body if tok.body is not None else ""
                elif pending == "<<<":
                    feed = tok.value + "\n"
                pending = None
            elif not tok.quoted and _BRACES.search(tok.value):
                argv.extend(_brace_expand(tok.value))
            else:
                argv.append(tok.value)
        elif tok in _REDIRECTS:
            pending = tok
        elif skip_close and tok == ")":
            skip_close = False
        elif tok == "(" and len(argv) == 1 and not redirects and tokens[k + 1 : k + 2] == [")"]:
            defining, argv, skip_close = argv[0], [], True  # name() { … }: a definition, not a command
        else:
            finish()
            if tok in _PIPES:
                position += 1
            elif tok not in _PARENS:
                result.pipelines += 1
                pipeline, position = result.pipelines, 0
    finish()
