"""The shadow git repository (``checkpoints.mode: "shadow-git"``, docs/rewind-plan.md §6).

One repository per workspace, ``<dataDir>/file-history/shadow/<sha256(realpath cwd)[:16]>/``,
used as ``GIT_DIR`` with the workspace as ``GIT_WORK_TREE``; the user's own repository (its
objects, index, refs, HEAD, config) is never opened for writing: git runs with
``GIT_DIR`` set, so it does not even discover it.

* every git call gets a scrubbed environment: no inherited ``GIT_*``, no system config, a
  global config of ours that holds only ``safe.directory``, a fixed identity, ``LC_ALL=C``;
* the repository's own config turns off hooks, fsmonitor, line-ending conversion and
  automatic gc; ``info/attributes`` unsets ``text``/``filter``/``ident``/encodings for every
  path, so the stored blobs are the bytes on disk;
* each process has its own index file (seeded from the last one any process wrote, so a
  new process does not hash the whole tree again);
* ``info/exclude`` holds ``.git`` and the user's rules from outside cwd (``ignores.py``).

Nothing here runs at import; every process is started by a method call.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import weakref
from dataclasses import dataclass

from ama.checkpoints import ignores
from ama.checkpoints.paths import shadow_repo_dir, shadow_root

_TIMEOUT_S = 600

REPO_CONFIG = """\
[core]
\trepositoryformatversion = 0
\tbare = false
\tfilemode = true
\tsymlinks = true
\tlogallrefupdates = false
\tautocrlf = false
\tsafecrlf = false
\thooksPath = /dev/null
\tfsmonitor = false
\tuntrackedCache = true
\tattributesFile = /dev/null
\texcludesFile = /dev/null
\tcompression = 1
\tlooseCompression = 1
\tquotePath = false
[gc]
\tauto = 0
[index]
\tversion = 4
[advice]
\taddEmbeddedRepo = false
\taddIgnoredFile = false
[commit]
\tgpgSign = false
"""
GLOBAL_CONFIG = "[safe]\n\tdirectory = *\n"
ATTRIBUTES = "* -text -filter -ident -working-tree-encoding\n"


class ShadowError(Exception):
    """A git command of the shadow repository failed."""


@dataclass
class Change:
    """One path that differs between two trees (``a`` = the old side)."""

    path: str
    status: str  # A: only in b, D: only in a, M / T: both
    a_mode: str
    b_mode: str
    a_oid: str
    b_oid: str


def _write_atomic(path: str, text: str) -> None:
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(text)
    os.replace(tmp, path)


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


class ShadowGit:
    def __init__(self, data_dir: str | os.PathLike[str], cwd: str, *, git: str) -> None:
        self.git = git
        self.work_tree = os.path.realpath(cwd)
        self.repo = shadow_repo_dir(data_dir, cwd)
        self.global_config = os.path.join(shadow_root(data_dir), "gitconfig")
        self.index = os.path.join(self.repo, f"index-{os.getpid()}-{os.urandom(4).hex()}")
        self._excludes_sig: tuple | None = None
        self._prepared = False
        #: the last ``write_tree`` built the index from nothing (hashed every file)
        self.cold = False
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(
            GIT_DIR=self.repo,
            GIT_WORK_TREE=self.work_tree,
            GIT_INDEX_FILE=self.index,
            GIT_CONFIG_GLOBAL=self.global_config,
            GIT_CONFIG_NOSYSTEM="1",
            GIT_CONFIG_SYSTEM=os.devnull,
            GIT_ATTR_NOSYSTEM="1",
            GIT_AUTHOR_NAME="ama",
            GIT_AUTHOR_EMAIL="ama@localhost",
            GIT_COMMITTER_NAME="ama",
            GIT_COMMITTER_EMAIL="ama@localhost",
            GIT_TERMINAL_PROMPT="0",
            GIT_NO_REPLACE_OBJECTS="1",
            LC_ALL="C",
        )
        self.env = env
        weakref.finalize(self, _remove, self.index)

    # --- running git ----------------------------------------------------------------

    def run(self, *args: str, input: bytes | None = None, ok: tuple[int, ...] = (0,)) -> bytes:
        try:
            p = subprocess.run(
                [self.git, *args],
                input=input,
                capture_output=True,
                env=self.env,
                cwd=self.work_tree,
                timeout=_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.SubprocessError) as e:
            raise ShadowError(f"git {args[0]}: {e}") from e
        if p.returncode not in ok:
            msg = p.stderr.decode("utf-8", "replace").strip().splitlines()
            raise ShadowError(f"git {args[0]} exited {p.returncode}: {msg[-1] if msg else ''}")
        return p.stdout

    # --- set-up -----------------------------------------------------------------------

    def prepare(self) -> None:
        """Create the repository if needed, (re)write our config, seed our index."""
        if self._prepared:
            return
        os.makedirs(self.repo, mode=0o700, exist_ok=True)
        if not os.path.isfile(self.global_config):
            _write_atomic(self.global_config, GLOBAL_CONFIG)
        if not os.path.isfile(os.path.join(self.repo, "HEAD")):
            init_env = {
                k: v for k, v in self.env.items() if k not in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE")
            }
            try:
                p = subprocess.run(
                    [self.git, "init", "--quiet", "--bare", "--template=", self.repo],
                    capture_output=True,
                    env=init_env,
                    cwd=self.repo,
                    timeout=_TIMEOUT_S,
                    check=False,
                )
            except (OSError, subprocess.SubprocessError) as e:
                raise ShadowError(f"git init: {e}") from e
            if p.returncode != 0:
                raise ShadowError(
                    f"git init exited {p.returncode}: {p.stderr.decode('utf-8', 'replace').strip()}"
                )
        _write_atomic(os.path.join(self.repo, "config"), REPO_CONFIG)
        info = os.path.join(self.repo, "info")
        os.makedirs(info, exist_ok=True)
        _write_atomic(os.path.join(info, "attributes"), ATTRIBUTES)
        self._clean_stale_indexes()
        base = os.path.join(self.repo, "index.base")
        if os.path.isfile(base) and not os.path.exists(self.index):
            try:
                shutil.copyfile(base, self.index)
            except OSError:
                pass
        self.refresh_excludes()
        self._prepared = True

    def _clean_stale_indexes(self) -> None:
        try:
            names = os.listdir(self.repo)
        except OSError:
            return
        for name in names:
            if not name.startswith("index-"):
                continue
            try:
                pid = int(name.split("-")[1])
            except (IndexError, ValueError):
                continue
            if pid != os.getpid() and not _pid_alive(pid):
                _remove(os.path.join(self.repo, name))

    def refresh_excludes(self) -> None:
        sources = ignores.exclude_sources(self.work_tree)
        sig = ignores.signature(sources)
        if sig == self._excludes_sig:
            return
        _write_atomic(os.path.join(self.repo, "info", "exclude"), ignores.render(sources))
        self._excludes_sig = sig

    # --- snapshots --------------------------------------------------------------------

    def count_files(self, limit: int) -> int:
        """Files git would snapshot (tracked + untracked, not ignored), counting stops
        just above ``limit``."""
        self.prepare()
        try:
            p = subprocess.Popen(
                [self.git, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=self.env,
                cwd=self.work_tree,
            )
        except OSError as e:
            raise ShadowError(f"git ls-files: {e}") from e
        n = 0
        assert p.stdout is not None
        try:
            while chunk := p.stdout.read(1 << 16):
                n += chunk.count(b"\0")
                if n > limit:
                    p.kill()
                    break
        finally:
            p.stdout.close()
            p.wait()
        return n

    def write_tree(self) -> str:
        """Bring our index in line with the work tree and write it as a tree: files that
        became ignored leave, everything else is added (``add -A``).

        Without an index yet (``self.cold``), every file is hashed and stored: then blobs
        go straight into one pack (git's bulk check-in for files above
        ``core.bigFileThreshold``) instead of one loose object file each, about twice as
        fast.  Later snapshots store their few new blobs as loose objects, so packs do not
        pile up turn after turn."""
        self.prepare()
        self.refresh_excludes()
        self.cold = not os.path.exists(self.index)
        ignored = self.run("ls-files", "-z", "--cached", "--ignored", "--exclude-standard")
        if ignored:
            self.run("update-index", "-z", "--force-remove", "--stdin", input=ignored)
        bulk = ("-c", "core.bigFileThreshold=1") if self.cold else ()
        # --ignore-errors: an unreadable file is left out (exit 1), the rest is added
        self.run(*bulk, "add", "--all", "--ignore-errors", ok=(0, 1))
        return self.run("write-tree").decode().strip()

    def commit(self, tree: str, message: str, *, parent: str | None, ref: str | None) -> str:
        args = ["commit-tree", tree, "-m", message]
        try:
            out = self.run(*args, *(("-p", parent) if parent else ()))
        except ShadowError:
            if not parent:
                raise
            out = self.run(*args)  # the parent is gone (repository recreated)
        commit = out.decode().strip()
        if ref:
            path = os.path.join(self.repo, "refs", "ama", ref)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            _write_atomic(path, commit + "\n")
        self._save_base_index()
        return commit

    def _save_base_index(self) -> None:
        tmp = os.path.join(self.repo, f"index.base.tmp-{os.getpid()}")
        try:
            shutil.copyfile(self.index, tmp)
            os.replace(tmp, os.path.join(self.repo, "index.base"))
        except OSError:
            _remove(tmp)

    # --- reading ----------------------------------------------------------------------

    def has_commit(self, oid: str) -> bool:
        try:
            self.run("cat-file", "-e", f"{oid}^{{commit}}")
        except ShadowError:
            return False
        return True

    def diff(self, a: str, b: str) -> list[Change]:
        out = self.run("diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", a, b)
        parts = out.split(b"\0")
        changes = []
        i = 0
        while i + 1 < len(parts):
            meta, path = parts[i], parts[i + 1]
            i += 2
            if not meta.startswith(b":"):
                continue
            fields = meta[1:].decode().split()
            if len(fields) < 5:
                continue
            changes.append(
                Change(
                    path=path.decode("utf-8", "surrogateescape"),
                    status=fields[4][:1],
                    a_mode=fields[0],
                    b_mode=fields[1],
                    a_oid=fields[2],
                    b_oid=fields[3],
                )
            )
        return changes

    def sizes(self, oids: list[str]) -> dict[str, int]:
        if not oids:
            return {}
        out = self.run("cat-file", "--batch-check", input=("\n".join(oids) + "\n").encode())
        sizes = {}
        for line in out.decode().splitlines():
            f = line.split()
            if len(f) == 3 and f[1] == "blob":
                sizes[f[0]] = int(f[2])
        return sizes

    def blobs(self, oids: list[str]) -> dict[str, bytes]:
        """Contents of blobs (missing ones are left out)."""
        if not oids:
            return {}
        out = self.run("cat-file", "--batch", input=("\n".join(oids) + "\n").encode())
        result: dict[str, bytes] = {}
        pos = 0
        while pos < len(out):
            nl = out.index(b"\n", pos)
            header = out[pos:nl].decode().split()
            pos = nl + 1
            if len(header) != 3:
                continue
            size = int(header[2])
            result[header[0]] = out[pos : pos + size]
            pos += size + 1
        return result

    def ignored(self, paths: list[str]) -> set[str]:
        """Which of ``paths`` (relative to the work tree) the ignore rules exclude."""
        if not paths:
            return set()
        data = b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths)
        out = self.run("check-ignore", "--no-index", "-z", "--stdin", input=data, ok=(0, 1))
        return {p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p}
