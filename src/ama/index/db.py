"""``<data dir>/index.db``: connection settings and the schema, as numbered migrations.

The database is a projection of the session files (SPEC D1/D2): deleting it loses
nothing.  Settings: WAL journal, ``busy_timeout=5000``, ``foreign_keys=ON``.  Every
migration is a function appended to :data:`MIGRATIONS` and recorded in
``schema_migrations`` when applied; a database of a newer ama is not touched.

Rows belong to a *root* (an absolute sessions directory); a file's rows are keyed by root
and absolute path, so ``--session-dir`` elsewhere is never answered from another root.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

from ama.errors import AmaError

FILE_NAME = "index.db"

MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = []
migration = MIGRATIONS.append


class IndexUnavailable(AmaError):
    """The index cannot be used (missing, locked, damaged, newer); readers scan instead."""

    def __init__(self, message: str) -> None:
        super().__init__("index_unavailable", message)


def _script(db: sqlite3.Connection, sql: str) -> None:
    """Run ``;``-separated statements inside the caller's transaction (``executescript``
    would commit it)."""
    for stmt in sql.split(";"):
        if stmt.strip():
            db.execute(stmt)


@migration
def m001_initial(db: sqlite3.Connection) -> None:
    _script(
        db,
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE roots (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE);
        CREATE TABLE files (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            root_id INTEGER NOT NULL REFERENCES roots(id) ON DELETE CASCADE,
            path TEXT NOT NULL,
            size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL,
            ino INTEGER NOT NULL,
            offset INTEGER NOT NULL,
            valid INTEGER NOT NULL,
            session_id TEXT NOT NULL DEFAULT '',
            cwd TEXT NOT NULL DEFAULT '',
            version INTEGER NOT NULL DEFAULT 0,
            last_ms INTEGER NOT NULL DEFAULT 0,
            leaf INTEGER NOT NULL DEFAULT 0,
            ndocs INTEGER NOT NULL DEFAULT 0,
            ot_day TEXT,
            ot_provider TEXT,
            ot_model TEXT,
            ot_channel TEXT,
            ot_ms INTEGER,
            UNIQUE (root_id, path)
        );
        CREATE TABLE file_data (
            file_id INTEGER PRIMARY KEY REFERENCES files(id) ON DELETE CASCADE,
            head BLOB NOT NULL DEFAULT x'',
            tail BLOB NOT NULL DEFAULT x'',
            summary TEXT NOT NULL DEFAULT '',
            state BLOB,
            parents BLOB NOT NULL DEFAULT x'',
            offs BLOB NOT NULL DEFAULT x'',
            lens BLOB NOT NULL DEFAULT x'',
            users BLOB NOT NULL DEFAULT x''
        );
        CREATE TABLE stat_requests (
            file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
            day TEXT NOT NULL, kind TEXT NOT NULL,
            provider TEXT NOT NULL, model TEXT NOT NULL, channel TEXT NOT NULL,
            requests INTEGER NOT NULL, input INTEGER NOT NULL, output INTEGER NOT NULL,
            cache_read INTEGER NOT NULL, cache_write INTEGER NOT NULL, cost_units INTEGER NOT NULL,
            priced INTEGER NOT NULL, errors INTEGER NOT NULL, retries INTEGER NOT NULL,
            PRIMARY KEY (file_id, day, kind, provider, model, channel)
        ) WITHOUT ROWID;
        CREATE TABLE stat_turns (
            file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
            day TEXT NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL, channel TEXT NOT NULL,
            turns INTEGER NOT NULL, duration_ms INTEGER NOT NULL,
            PRIMARY KEY (file_id, day, provider, model, channel)
        ) WITHOUT ROWID;
        CREATE TABLE stat_tools (
            file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
            day TEXT NOT NULL, name TEXT NOT NULL, calls INTEGER NOT NULL,
            PRIMARY KEY (file_id, day, name)
        ) WITHOUT ROWID;
        CREATE TABLE stat_latency (
            file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
            day TEXT NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL, channel TEXT NOT NULL,
            purpose TEXT NOT NULL, ttfb_ms REAL, duration_ms REAL, http_status INTEGER, attempt INTEGER
        );
        CREATE INDEX stat_latency_file ON stat_latency (file_id);
        CREATE TABLE runs (
            file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
            execution_id TEXT NOT NULL,
            status TEXT NOT NULL, terminal_reason TEXT, error_code TEXT,
            step_index INTEGER NOT NULL, created_ms INTEGER NOT NULL, updated_ms INTEGER NOT NULL,
            completed_ms INTEGER, prompt TEXT, model TEXT,
            start_k INTEGER NOT NULL, end_k INTEGER, last_k INTEGER NOT NULL,
            steps INTEGER NOT NULL, superseded INTEGER NOT NULL, anomalies TEXT NOT NULL,
            PRIMARY KEY (file_id, execution_id)
        );
        CREATE INDEX runs_execution ON runs (execution_id);
        CREATE TABLE run_steps (
            file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
            execution_id TEXT NOT NULL, step INTEGER NOT NULL, k INTEGER NOT NULL,
            entry_id TEXT NOT NULL, timestamp TEXT NOT NULL, stop_reason TEXT NOT NULL,
            tools TEXT NOT NULL, error TEXT,
            PRIMARY KEY (file_id, execution_id, step)
        ) WITHOUT ROWID;
        CREATE VIRTUAL TABLE fts USING fts5(
            text, content='', detail=none, tokenize='unicode61 remove_diacritics 0'
        );
        CREATE TABLE terms (term TEXT PRIMARY KEY) WITHOUT ROWID;
        """,
    )


@migration
def m002_query_cache(db: sqlite3.Connection) -> None:
    """Reports of read-only queries (``ama stats``), valid while the index's ``generation``
    (bumped by every write) is the same."""
    db.execute(
        "CREATE TABLE query_cache (key TEXT PRIMARY KEY, generation INTEGER NOT NULL, value TEXT NOT NULL)"
    )


@migration
def m003_catalog_metadata(db: sqlite3.Connection) -> None:
    """Seed 002's catalog metadata per file (``ama.session.meta``): assistant errors, a
    pending interaction, the task status.  The catalog summary carries the same values;
    a rebuild fills these columns for files indexed before (the summary's fields changed)."""
    _script(
        db,
        """
        ALTER TABLE files ADD COLUMN error_count INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE files ADD COLUMN pending_interaction TEXT;
        ALTER TABLE files ADD COLUMN task_status TEXT NOT NULL DEFAULT 'completed'
        """,
    )


@migration
def m004_external_usage(db: sqlite3.Connection) -> None:
    """``ama.agent-usage`` records summed per file, day, agent and external session
    (docs/external-agents.md); cost in units of 1e-10 USD."""
    db.execute(
        "CREATE TABLE stat_external ("
        " file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,"
        " day TEXT NOT NULL, agent TEXT NOT NULL, session_id TEXT NOT NULL,"
        " turns INTEGER NOT NULL, cost_units INTEGER NOT NULL, input INTEGER NOT NULL,"
        " output INTEGER NOT NULL, cache_read INTEGER NOT NULL, cache_write INTEGER NOT NULL,"
        " requests INTEGER NOT NULL,"
        " PRIMARY KEY (file_id, day, agent, session_id)"
        ") WITHOUT ROWID"
    )


@migration
def m005_run_details(db: sqlite3.Connection) -> None:
    """A run's details (``index/runlog.py`` ``DETAIL_KEYS``: error message, limit, error
    category / HTTP status, fallback) as JSON.  Rows indexed before stay NULL and are read
    from the run's record in its session file, so no rebuild is needed."""
    db.execute("ALTER TABLE runs ADD COLUMN details TEXT")


@migration
def m006_verified_roots(db: sqlite3.Connection) -> None:
    """``roots.verified``: the digest of a root's session files (paths, sizes, mtimes,
    inodes; ``indexer.DiskState.digest``) as they were when a refresh last found its rows
    current.  A refresh whose walk gives the same digest reads no rows.  Any change to the
    root's file rows clears it, by these triggers, in the writer's own transaction."""
    db.execute("ALTER TABLE roots ADD COLUMN verified TEXT")
    for event, ref in (("INSERT", "NEW.root_id"), ("DELETE", "OLD.root_id")):
        db.execute(
            f"CREATE TRIGGER files_{event.lower()}_unverify AFTER {event} ON files BEGIN"
            f" UPDATE roots SET verified = NULL WHERE id = {ref} AND verified IS NOT NULL; END"
        )
    db.execute(
        "CREATE TRIGGER files_update_unverify AFTER UPDATE OF root_id, path, size, mtime_ns, ino ON files BEGIN"
        " UPDATE roots SET verified = NULL WHERE id IN (OLD.root_id, NEW.root_id) AND verified IS NOT NULL; END"
    )


@migration
def m007_catalog(db: sqlite3.Connection) -> None:
    """``catalog``: per file, what ``sessions list`` sorts, filters, links and abbreviates
    by (``index/listing.py``), so that a page decodes only the summaries it prints.  Filled
    from the stored summaries; files whose summary has other fields get theirs when they
    are indexed again."""
    _script(
        db,
        """
        CREATE TABLE catalog (
            file_id INTEGER PRIMARY KEY REFERENCES files(id) ON DELETE CASCADE,
            root_id INTEGER NOT NULL,
            session_id TEXT NOT NULL,
            cwd TEXT NOT NULL,
            last_ms INTEGER NOT NULL,
            parent TEXT,
            archived_own INTEGER NOT NULL,
            subagent INTEGER NOT NULL,
            problem INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL,
            lid TEXT NOT NULL,
            lnid TEXT NOT NULL
        );
        CREATE INDEX catalog_root ON catalog (root_id);
        CREATE INDEX catalog_order ON catalog (root_id, last_ms DESC, cwd, session_id);
        CREATE INDEX catalog_session ON catalog (root_id, session_id);
        CREATE INDEX catalog_lid ON catalog (root_id, lid);
        CREATE INDEX catalog_lnid ON catalog (root_id, lnid);
        CREATE INDEX catalog_problem ON catalog (root_id) WHERE problem = 1;
        CREATE INDEX catalog_own ON catalog (root_id) WHERE archived_own = 1;
        CREATE INDEX catalog_lineage ON catalog (root_id) WHERE archived_own = 1 OR parent IS NOT NULL
        """,
    )
    from ama.index.listing import fill_catalog

    fill_catalog(db)


def path() -> str:
    from ama.config.paths import data_dir_str

    return os.path.join(data_dir_str(), FILE_NAME)


@contextlib.contextmanager
def no_wait(db: sqlite3.Connection) -> Iterator[None]:
    """Statements inside fail at once on a locked index instead of waiting (best-effort
    writes of a read: the query cache, the verified mark)."""
    (timeout,) = db.execute("PRAGMA busy_timeout").fetchone()
    db.execute("PRAGMA busy_timeout = 0")
    try:
        yield
    finally:
        db.execute(f"PRAGMA busy_timeout = {int(timeout)}")


def _configure(db: sqlite3.Connection) -> None:
    db.execute("PRAGMA busy_timeout = 5000")
    mode = db.execute("PRAGMA journal_mode = WAL").fetchone()
    if mode is None or str(mode[0]).lower() != "wal":
        raise IndexUnavailable(f"cannot switch the index to WAL mode (got {mode!r})")
    db.execute("PRAGMA foreign_keys = ON")
    db.execute("PRAGMA synchronous = NORMAL")
    db.execute("PRAGMA temp_store = MEMORY")  # the build's vocabulary of new documents (update.py)


def _migrate(db: sqlite3.Connection) -> None:
    db.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations "
        "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    (have,) = db.execute("SELECT coalesce(max(version), 0) FROM schema_migrations").fetchone()
    if have > len(MIGRATIONS):
        raise IndexUnavailable(
            f"the index was written by a newer ama (schema {have}, this ama knows {len(MIGRATIONS)})"
        )
    if have == len(MIGRATIONS):
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        (have,) = db.execute("SELECT coalesce(max(version), 0) FROM schema_migrations").fetchone()
        for version, fn in enumerate(MIGRATIONS[have:], start=have + 1):
            fn(db)
            db.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                (version, fn.__name__, datetime.now(UTC).isoformat(timespec="seconds")),
            )
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def unusable(e: sqlite3.Error, what: str = "the index") -> IndexUnavailable:
    """The error for an index that SQLite refused, with the fix that fits: rebuilding
    (``ama doctor --reindex``) only mends a damaged or foreign database, not a lock held by
    another process, a read-only file or a full disk."""
    text = str(e)
    low = text.lower()
    if "locked" in low or "busy" in low:
        hint = "another ama process is writing it; try again"
    elif "readonly" in low or "read-only" in low or "full" in low or "disk i/o" in low or "unable to open" in low:
        hint = "check the file's permissions and the free disk space"
    else:
        hint = "rebuild it with: ama doctor --reindex"
    return IndexUnavailable(f"{what} is not usable ({text}); {hint}")


def connect(db_path: str | None = None) -> sqlite3.Connection:
    """Open (creating if needed) and migrate the index; raises IndexUnavailable."""
    p = db_path or path()
    try:
        os.makedirs(os.path.dirname(p) or ".", exist_ok=True)
        db = sqlite3.connect(p, timeout=5.0, isolation_level=None, check_same_thread=False)
    except (OSError, sqlite3.Error) as e:
        raise IndexUnavailable(f"cannot open the index {p}: {e}") from None
    try:
        _configure(db)
        _migrate(db)
    except sqlite3.Error as e:
        db.close()
        raise unusable(e, f"the index {p}") from None
    except BaseException:
        db.close()
        raise
    return db


def remove(db_path: str | None = None) -> None:
    """Delete the index files (the database, its WAL and shared-memory files)."""
    p = db_path or path()
    for suffix in ("", "-wal", "-shm"):
        try:
            os.unlink(p + suffix)
        except FileNotFoundError:
            pass
