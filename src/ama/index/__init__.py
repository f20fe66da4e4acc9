"""The session index: a rebuildable SQLite projection of the session files, and the
read-side features built on it (stats, search, runs, the catalog listing).

The files are the truth (SPEC D1); ``<data dir>/index.db`` is a cache that every reader
can do without.  Each feature has two paths that return identical results: one answers
from the index (refreshing it incrementally first), the other scans the files.  Both go
through the same per-file extraction (``extract.py``), so they cannot drift apart.

Modules: ``timeutil`` (timestamps, local day buckets, ``--since``), ``lines`` (line
decoders, entry classification, searchable text), ``facts`` (stats facts of a line),
``runlog`` (run records and steps), ``extract`` (one file's bytes from an offset -> rows),
``db`` (schema, migrations, connection), ``indexer`` (incremental refresh), ``stats``,
``search``, ``runs``, ``listing`` (the feature queries), ``reuse`` (``--from``).
"""
