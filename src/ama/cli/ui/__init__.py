"""The parts of the interactive terminal UI (``ama.cli.interactive`` coordinates them):
the live region and status line, approvals by single key, completion, the rewind panel,
pickers and the resume history.  See docs/cli.md ("Interactive mode")."""
