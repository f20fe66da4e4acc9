"""ama: a terminal coding agent with durable, searchable, rewindable sessions."""

__version__ = "0.1.0"
