"""Start the walk of a sessions directory before a command loads (``ama.index.disk.early``).

Imported by ``ama.cli.main`` before anything else of the command: it loads only ``os``,
the configured paths and the disk walk."""

from __future__ import annotations

from ama.errors import AmaError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing; mypy knows it
if TYPE_CHECKING:
    from ama.index.disk import Early


class _NoWalk:
    def __enter__(self) -> _NoWalk:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def reads_index(argv: list[str]) -> bool:
    """``ama stats``, ``ama sessions list``, ``ama sessions search`` (with the index or not):
    commands that read session files and the index and write nothing else."""
    cmd = argv[:2] if argv[:1] == ["sessions"] else argv[:1]
    return cmd in (["stats"], ["sessions", "list"], ["sessions", "search"])


def early_walk(argv: list[str]) -> Early | _NoWalk:
    """``with early_walk(argv): ...`` around a command line about to be parsed.  ``ama
    stats``, ``ama sessions list`` and ``ama sessions search`` read the index of their
    sessions directory: the walk and stats of its files (``ama.index.disk.early``) can start
    in a forked child before argparse, the command's modules and SQLite load.  The directory
    is taken from ``--session-dir`` as written in full (else from the environment); a command
    line that argparse reads otherwise (an abbreviated option, ``--`` before it) only wastes
    the walk: the index's refresh takes a walk of its own root only."""
    if not reads_index(argv):
        return _NoWalk()
    given = None
    for i, a in enumerate(argv):
        if a in ("--no-cache", "-h", "--help", "--"):
            return _NoWalk()
        if a == "--session-dir" and i + 1 < len(argv):
            given = argv[i + 1]
        elif a.startswith("--session-dir="):
            given = a[len("--session-dir=") :]
    from ama.config.paths import data_dir_str, sessions_dir_str

    try:
        root, data_dir = sessions_dir_str(given), data_dir_str()
    except AmaError:  # (argparse's run says so)
        return _NoWalk()
    from ama.index.disk import early

    return early(root, data_dir=data_dir)
