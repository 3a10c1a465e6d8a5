"""What the search tools share: the directory a call searches, and output bounded with a count."""

from __future__ import annotations

import os
import stat

from agent_runtime.tool_runtime.errors import ToolFailure
from agent_runtime.tool_runtime.tools.base import ToolContext
from agent_runtime.tool_runtime.tools.file.common import os_failure
from contracts.errors import ErrorCode

__all__ = ["Bounded", "search_root", "walk_notes"]


def search_root(raw: str | None, context: ToolContext, *, directory_only: bool) -> tuple[str, bool]:
    """The resolved path a call searches (its ``path``, else the project folder) and whether it is a
    directory; a missing path or, with ``directory_only``, a file is a clear failure."""
    if raw is None:
        if context.workspace_root is None:
            raise ToolFailure(
                ErrorCode.INVALID_REQUEST, "arguments.path is required: this session has no project folder"
            )
        raw = context.workspace_root
    path = context.platform.normalize_path(raw, field="arguments.path", workspace_root=context.workspace_root)
    try:
        info = os.stat(path)
    except OSError as exc:
        failure = os_failure(exc, "read", path)
        if failure.code is ErrorCode.FILE_NOT_FOUND:
            raise ToolFailure(ErrorCode.FILE_NOT_FOUND, f"Not found: {path}") from exc
        raise failure from exc
    is_dir = stat.S_ISDIR(info.st_mode)
    if directory_only and not is_dir:
        raise ToolFailure(ErrorCode.INVALID_REQUEST, f"arguments.path is not a directory: {path}")
    return path, is_dir


class Bounded:
    """Lines up to ``max_lines`` and ``max_bytes`` (UTF-8); past either, only counted."""

    def __init__(self, max_lines: int, max_bytes: int) -> None:
        self._max_lines = max_lines
        self._room = max_bytes
        self.lines: list[str] = []
        self.full = False

    def add(self, line: str) -> bool:
        """Keep ``line`` if there is room; False once full (the caller counts what it leaves out)."""
        if self.full:
            return False
        size = len(line.encode("utf-8", errors="surrogatepass")) + 1
        if len(self.lines) >= self._max_lines or size > self._room:
            self.full = True
            return False
        self._room -= size
        self.lines.append(line)
        return True


def walk_notes(*, withheld: int, ignored: int, ignored_hint: str | None) -> list[str]:
    """The lines saying what a walk skipped, so the model knows the listing is not everything."""
    notes = []
    if ignored:
        hint = f"; {ignored_hint}" if ignored_hint else ""
        notes.append(f"[{ignored} entries skipped by .gitignore or as version-control data{hint}]")
    if withheld:
        notes.append(f"[{withheld} entries not shown: the policy does not allow reading them]")
    return notes
