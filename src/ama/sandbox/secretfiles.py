"""Secret paths: one list for the sandbox (hidden) and the permission rules (asked).

``CREDENTIAL_PATHS`` are the credential paths under the home directory; ``is_env_file`` names
the ``.env`` / ``.env.*`` files (templates such as ``.env.example`` excepted).  The permission
layer (``ama.permissions._secrets``) imports both from here, so that what asks there is what
the sandbox hides.

Inside the workspace, ``workspace_secrets`` finds the same names -- ``.env`` files and the
credential paths (``.aws``, ``.netrc``, ``.ssh``, ...) -- in the workspace and its
subdirectories down to ``SCAN_DEPTH`` levels (``.git`` and ``node_modules`` are not entered;
neither are symlinked directories), and the bash sandbox hides them unless
``sandbox.allowSecrets`` names them.  The scan runs before every sandboxed call: a
secret created since the last call is hidden from the next one.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable

#: credential paths under the home directory, made unreadable (same list as the permission rules)
CREDENTIAL_PATHS: tuple[str, ...] = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".kube",
    ".docker/config.json",
    ".config/gcloud",
    ".netrc",
    ".pgpass",
    ".git-credentials",
)
AUTH_FILE = "auth.json"  # in ama's data and config directories

#: ``.env.*`` files that hold no secrets by convention
ENV_TEMPLATES = frozenset({".env.example", ".env.sample", ".env.template", ".env.dist", ".env.defaults"})

SCAN_DEPTH = 4  # the workspace itself is depth 1
SCAN_MAX_DIRS = 2000  # a guard for huge trees: deeper secrets are then not hidden
SKIP_DIRS = frozenset({".git", "node_modules"})

_FIRST = {rel.split("/", 1)[0]: rel for rel in CREDENTIAL_PATHS}


def is_env_file(name: str) -> bool:
    """``.env`` or ``.env.<anything>``, except the templates in ``ENV_TEMPLATES``."""
    return (name == ".env" or name.startswith(".env.")) and name not in ENV_TEMPLATES


def allowed(rel: str, allow: Iterable[str]) -> bool:
    """Whether ``sandbox.allowSecrets`` names ``rel`` (a workspace-relative path): a glob
    matched against the relative path or against its last component."""
    base = rel.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatchcase(rel, p) or fnmatch.fnmatchcase(base, p) for p in allow)


class SecretScan:
    """``workspace_secrets`` with a cache: a directory whose mtime is unchanged since the
    last scan is not listed again (one ``stat`` instead of a ``scandir``)."""

    def __init__(self) -> None:
        self._dirs: dict[str, tuple[int, list[str], list[str]]] = {}

    def _list(self, directory: str) -> tuple[list[str], list[str]]:
        """(secret paths, subdirectories) directly in ``directory``."""
        try:
            mtime = os.stat(directory, follow_symlinks=False).st_mtime_ns
        except OSError:
            self._dirs.pop(directory, None)
            return [], []
        cached = self._dirs.get(directory)
        if cached is not None and cached[0] == mtime:
            return cached[1], cached[2]
        hits: list[str] = []
        subdirs: list[str] = []
        try:
            entries = list(os.scandir(directory))
        except OSError:
            entries = []
        for entry in entries:
            name = entry.name
            try:
                if is_env_file(name):
                    if entry.is_file():  # a virtualenv named .env is no secret
                        hits.append(entry.path)
                elif name in _FIRST:
                    hits.append(os.path.join(directory, _FIRST[name]))
                elif name not in SKIP_DIRS and entry.is_dir(follow_symlinks=False):
                    subdirs.append(entry.path)
            except OSError:
                continue
        self._dirs[directory] = (mtime, hits, subdirs)
        return hits, subdirs

    def scan(self, workspace: str, allow: Iterable[str] = ()) -> list[str]:
        """Realpaths of the secret files and directories in ``workspace`` (see module doc)."""
        allow = tuple(allow)
        found: list[str] = []
        stack: list[tuple[str, int]] = [(workspace, 1)]
        dirs_seen = 0
        while stack and dirs_seen < SCAN_MAX_DIRS:
            directory, depth = stack.pop()
            dirs_seen += 1
            hits, subdirs = self._list(directory)
            for hit in hits:
                if os.path.lexists(hit) and not allowed(os.path.relpath(hit, workspace), allow):
                    found.append(os.path.realpath(hit))
            if depth < SCAN_DEPTH:
                stack.extend((d, depth + 1) for d in subdirs)
        return sorted(dict.fromkeys(found))


def workspace_secrets(workspace: str, allow: Iterable[str] = ()) -> list[str]:
    """Realpaths of the secret files and directories in ``workspace`` (no cache)."""
    return SecretScan().scan(workspace, allow)
