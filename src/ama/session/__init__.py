"""Session store: the append-only JSONL session format, its reader and writer, the tree,
the projection to model context, and the catalog (list, fork, archive, trash)."""
