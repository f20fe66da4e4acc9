"""Secret paths: credentials a tool call never reads (or writes) without asking.

The list is the one the OS sandbox makes unreadable (000 sandbox.md, "不可读"): ``~/.ssh``,
``~/.gnupg``, ``~/.aws``, ``~/.kube``, ``~/.docker/config.json``, ``~/.config/gcloud``,
``~/.netrc``, ``~/.pgpass``, ``~/.git-credentials``, ama's ``auth.json`` (in its config
directory, and in its data directory where ``ama.sandbox`` looks for it); plus ``.env`` / ``.env.*`` files anywhere (templates such as ``.env.example``
excepted).

Two checks: ``secret_path`` for a path argument already resolved to an absolute path, and
``mentions_secret`` for free text (a bash command, its words, a rule pattern).  Both treat
the home names (``.ssh``, ``.aws``, …) as secret under any directory (``~other/.ssh``,
``/root/.aws``, a symlinked home), so the two agree.  Checks are lexical: symlinks are not
followed and ``cat $(ls -a | grep env)`` builds its path at run time, unseen.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re

from ama.permissions._dangerous import expand_home
from ama.sandbox.bash import AUTH_FILE
from ama.sandbox.bash import CREDENTIAL_PATHS as HOME_SECRETS  # one list: the sandbox hides what asks here
from ama.sandbox.secretfiles import is_env_file  # the same .env list: hidden in the sandbox

_B = r"(?<![\w.-])"  # start of a path component
_E = r"(?![\w-])"  # end of a name (a following "." or "/" is fine: .ssh/id_rsa, .netrc.bak)
_HOME_RE = re.compile(_B + "(" + "|".join(re.escape(n) for n in HOME_SECRETS) + ")" + _E)
_ENV_RE = re.compile(_B + r"(\.env(?:\.[\w.-]+)?)(?![\w/-])")
_GLOB = re.compile(r"[*?\[]")


def secret_paths(home: str, auth_dirs: tuple[str, ...] = ()) -> list[str]:
    """The absolute secret paths (``.env`` files excepted: they are matched by name)."""
    return [posixpath.join(home, n) for n in HOME_SECRETS] + [
        posixpath.join(d, AUTH_FILE) for d in auth_dirs if d
    ]


def _label(path: str, home: str) -> str:
    if home and (path == home or path.startswith(home.rstrip("/") + "/")):
        return "~" + path[len(home.rstrip("/")) :]
    return path


def secret_path(path: str, *, home: str, auth_dirs: tuple[str, ...] = ()) -> str | None:
    """A short name of the secret ``path`` (absolute, normalized) is or lies in, else None."""
    for s in secret_paths(home, auth_dirs):
        if path == s or path.startswith(s + "/"):
            return _label(s, home)
    m = _HOME_RE.search(path)  # the same names under any other home (~other, /root, a symlinked home)
    if m:
        return path[: m.end()]
    if is_env_file(posixpath.basename(path)):
        return posixpath.basename(path)
    return None


def _auth_patterns(home: str, auth_dirs: tuple[str, ...]) -> list[tuple[re.Pattern[str], str]]:
    pats = []
    for d in auth_dirs:
        if not d:
            continue
        full = posixpath.join(d, AUTH_FILE)
        pats.append((re.compile(re.escape(full) + _E), full))
        if home and full.startswith(home.rstrip("/") + "/"):
            rel = full[len(home.rstrip("/")) + 1 :]
            pats.append((re.compile(_B + re.escape(rel) + _E), full))
    return pats


def mentions_secret(text: str, *, home: str, auth_dirs: tuple[str, ...] = (), cwd: str = "/") -> str | None:
    """The first secret ``text`` names (lexically), else None.  Globs in words are matched
    against the secret paths too: ``~/.ss*/id_rsa`` names ``~/.ssh``."""
    m = _HOME_RE.search(text)
    if m:
        return "~/" + m.group(1)
    for pat, full in _auth_patterns(home, auth_dirs):
        if pat.search(text):
            return _label(full, home)
    for m in _ENV_RE.finditer(text):
        if is_env_file(m.group(1)):
            return m.group(1)
    if _GLOB.search(text):
        for word in text.split():
            hit = _glob_names_secret(word, home=home, auth_dirs=auth_dirs, cwd=cwd)
            if hit:
                return hit
    return None


def _glob_names_secret(word: str, *, home: str, auth_dirs: tuple[str, ...], cwd: str) -> str | None:
    if not _GLOB.search(word):
        return None
    word = expand_home(word.strip("'\""), home)
    path = posixpath.normpath(word if word.startswith("/") else posixpath.join(cwd, word))
    parts = [p for p in path.split("/") if p not in ("", ".")]
    for secret in [*secret_paths(home, auth_dirs), posixpath.join(cwd, ".env")]:
        sparts = [p for p in secret.split("/") if p]
        if len(parts) < len(sparts):
            continue
        if all(_component_matches(s, p) for s, p in zip(sparts, parts)):
            return _label(secret, home)
    return None


def _component_matches(name: str, pattern: str) -> bool:
    if name.startswith(".") and not pattern.startswith("."):
        return False  # the shell's * does not match dotfiles
    return fnmatch.fnmatchcase(name, pattern)
