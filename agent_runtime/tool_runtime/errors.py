"""The tool runtime's one exception root.

::

    ToolRuntimeError
     └── ToolFailure              a tool call that ends as ToolResult(status="failed")
          └── DestinationRefused  HttpRequest: an address the SSRF guard does not admit

Nothing here escapes the router: ``LocalToolRouter.execute`` turns every ``ToolFailure`` into the
seed's failed result (seed 003 §7.3). Library and OS errors are translated into a ``ToolFailure`` once,
where they cross into this package, with a message written by us.
"""

from __future__ import annotations

import errno

from contracts.errors import ErrorCode

__all__ = ["DestinationRefused", "ToolFailure", "ToolRuntimeError", "describe_os_error"]


class ToolRuntimeError(Exception):
    """Root of every error raised inside ``agent_runtime.tool_runtime``."""


class ToolFailure(ToolRuntimeError):
    """A tool call that failed for a reason the caller should see (code and message of seed 003 §7.3).

    ``output_text`` carries what the tool produced before failing (a timed-out command's output so
    far), so the model still sees it.
    """

    def __init__(self, code: ErrorCode, message: str, *, output_text: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.output_text = output_text


class DestinationRefused(ToolFailure):
    """An HTTP destination on a loopback, private, link-local or otherwise non-public address."""

    def __init__(self, message: str) -> None:
        super().__init__(ErrorCode.INVALID_REQUEST, message)


_OS_PROBLEM_NAMES: dict[str, str] = {
    "ENOENT": "does not exist",
    "EACCES": "permission denied",
    "EPERM": "operation not permitted",
    "EISDIR": "is a directory",
    "ENOTDIR": "a parent is not a directory",
    "EEXIST": "already exists",
    "ENOSPC": "no space left on the device",
    "EROFS": "the file system is read-only",
    "ENAMETOOLONG": "the name is too long",
    "ELOOP": "too many levels of symbolic links",
    "EBUSY": "the file is in use",
    "ETXTBSY": "the file is in use",
    "EMFILE": "too many open files",
    "EDQUOT": "disk quota exceeded",
    "EIO": "input/output error",
    "EXDEV": "cannot move across file systems",
    "EINVAL": "invalid argument",
}
# Not every name exists on every OS (Windows lacks some), so the table is keyed by what this one has.
_OS_PROBLEMS: dict[int, str] = {
    getattr(errno, name): problem for name, problem in _OS_PROBLEM_NAMES.items() if hasattr(errno, name)
}


def describe_os_error(exc: OSError) -> str:
    """Our own words for an OS error (never the platform's message text, which varies by locale)."""
    if exc.errno is not None and exc.errno in _OS_PROBLEMS:
        return _OS_PROBLEMS[exc.errno]
    name = errno.errorcode.get(exc.errno or 0)
    return f"operating system error {name}" if name else "operating system error"
