"""The one error family of ama.

    AmaError(code, message)          every error a user or client can see
     ├── NotFound       code "not_found"          (CLI exit 5)
     ├── InvalidArguments  code "invalid_arguments" (CLI exit 2)
     ├── Busy           code "busy"               (CLI exit 3)
     └── any other code: "corrupt", "unsupported_version", "ambiguous",
         "no_checkpoint", "rewind_failed", "plan_not_found", "unsupported", ...

Dependency errors (OSError from the file system, HTTP errors, SQLite errors) are
mapped to an AmaError at the layer that sees them; they never leak through the
public API.  The CLI maps codes to exit codes in one place (``exit_code``).
"""

from __future__ import annotations


class AmaError(Exception):
    """An error with a stable machine-readable ``code`` and a human ``message``."""

    def __init__(self, code: str, message: str, *, data: dict | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data or {}

    def __str__(self) -> str:
        return self.message

    def to_json(self) -> dict:
        out: dict = {"code": self.code, "message": self.message}
        if self.data:
            out["data"] = self.data
        return out


class NotFound(AmaError):
    def __init__(self, message: str, **kw) -> None:
        super().__init__("not_found", message, **kw)


class InvalidArguments(AmaError):
    def __init__(self, message: str, **kw) -> None:
        super().__init__("invalid_arguments", message, **kw)


class Busy(AmaError):
    def __init__(self, message: str, **kw) -> None:
        super().__init__("busy", message, **kw)


#: CLI exit code per error code; anything not listed exits 1.
EXIT_CODES: dict[str, int] = {
    "invalid_arguments": 2,
    "ambiguous": 2,
    "busy": 3,
    "not_found": 5,
}


def exit_code(err: AmaError) -> int:
    return EXIT_CODES.get(err.code, 1)
