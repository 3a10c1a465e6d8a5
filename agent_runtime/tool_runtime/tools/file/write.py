"""WriteFile (seed 003 §4.2): atomic replacement, parent directories on request, a ``file_diff``."""

from __future__ import annotations

import asyncio
import functools
import os
import stat
from dataclasses import dataclass

from pydantic import Field

from agent_runtime.tool_runtime.errors import ToolFailure
from agent_runtime.tool_runtime.output.artifacts import inline_or_spooled
from agent_runtime.tool_runtime.output.results import ToolOutput
from agent_runtime.tool_runtime.tools.base import Arguments, Tool, ToolContext
from agent_runtime.tool_runtime.tools.file.atomic import write_atomically
from agent_runtime.tool_runtime.tools.file.common import decode_with_fallback, os_failure, runs_inline
from agent_runtime.tool_runtime.tools.file.diff import DIFF_INPUT_LIMIT, diff_label, unified_diff
from agent_runtime.tool_runtime.tools.ledger import ReadLedger, fingerprint_of
from contracts.enums import ArtifactType, Capability, ToolName
from contracts.errors import ErrorCode

__all__ = ["WriteFile", "WriteFileArguments", "remember_written"]


class WriteFileArguments(Arguments):
    path: str = Field(min_length=1, description="Absolute file path to write")
    content: str = Field(description="File content to write")
    create_directories: bool = Field(
        default=True, description="Create parent directories if they don't exist. Default: true"
    )


class WriteFile(Tool[WriteFileArguments]):
    name = ToolName.WRITE_FILE.value
    capability = Capability.FILE_WRITE
    description = (
        "Create or overwrite a file with the given content. "
        "The content replaces the whole file; read the file first to change part of it."
    )
    arguments = WriteFileArguments

    async def run(self, args: WriteFileArguments, context: ToolContext) -> ToolOutput:
        path = context.platform.normalize_path(
            args.path, field="arguments.path", workspace_root=context.workspace_root
        )
        try:
            data = args.content.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ToolFailure(
                ErrorCode.INVALID_REQUEST,
                "arguments.content is not valid Unicode text (it contains a lone surrogate)",
            ) from exc
        if context.max_file_size_bytes is not None and len(data) > context.max_file_size_bytes:
            raise ToolFailure(
                ErrorCode.FILE_TOO_LARGE,
                f"Content is {len(data)} bytes, over the {context.max_file_size_bytes}-byte limit: {path}",
            )
        label = diff_label(context.platform, path, context.workspace_root)
        encodings = context.platform.fallback_encodings("utf-8")
        write = functools.partial(
            _write_and_diff, path, data, args, label=label, reads=context.reads, encodings=encodings
        )
        if runs_inline(path, len(data)):
            diff = write()
        else:
            # Off the event loop in one thread hop; if the call is cancelled meanwhile, the write
            # still completes or not at all (never half), the result is just not reported.
            diff = await asyncio.to_thread(write)
        text = f"Wrote {len(data)} bytes to {path}"
        if diff is None:
            return ToolOutput(text=text + " (content unchanged)")
        artifact = inline_or_spooled(
            context.spool, ArtifactType.FILE_DIFF, f"{label.rsplit('/', 1)[-1]}.diff", "text/x-diff", diff
        )
        return ToolOutput(text=text, artifacts=[artifact])


@dataclass(frozen=True)
class _Before:
    """The file as it was: its size and content (only the first bytes when too large to diff)."""

    size: int
    content: bytes


def _write_and_diff(
    path: str,
    data: bytes,
    args: WriteFileArguments,
    *,
    label: str,
    reads: ReadLedger | None,
    encodings: tuple[str, ...],
) -> str | None:
    """Write ``data``, note it as read, and diff it with what it replaced (None: nothing changed)."""
    before = _write(path, data, args.create_directories)
    if reads is not None:
        # The agent knows what it just wrote: an EditFile of it needs no ReadFile first.
        remember_written(reads, path, data)
    if before is not None and before.size == len(data) and before.content == data:
        return None
    old_text = (
        None
        if before is None or before.size > DIFF_INPUT_LIMIT
        else decode_with_fallback(before.content, encodings)
    )
    return unified_diff(
        label,
        old_text,
        args.content,
        old_bytes=None if before is None else before.content,
        old_size=None if before is None else before.size,
    )


def _write(path: str, data: bytes, create_directories: bool) -> _Before | None:
    """Write ``data``; returns what the file held before (None for a new file) for the diff."""
    parent = os.path.dirname(path)
    try:
        if os.path.isdir(path):
            raise ToolFailure(ErrorCode.INVALID_REQUEST, f"arguments.path is a directory: {path}")
        if not os.path.isdir(parent):
            if os.path.lexists(parent):
                raise ToolFailure(
                    ErrorCode.INVALID_REQUEST,
                    f"arguments.path has a parent that is not a directory: {parent}",
                )
            if not create_directories:
                raise ToolFailure(
                    ErrorCode.FILE_NOT_FOUND,
                    f"Directory not found: {parent} (createDirectories is false)",
                )
            os.makedirs(parent, exist_ok=True)
        before, mode = _previous(path)
        write_atomically(path, data, mode=mode)
    except ToolFailure:
        raise
    except OSError as exc:
        raise os_failure(exc, "write", path) from exc
    return before


def _previous(path: str) -> tuple[_Before | None, int | None]:
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None, None
    if not stat.S_ISREG(info.st_mode):
        raise ToolFailure(
            ErrorCode.INVALID_REQUEST,
            f"arguments.path is not a regular file (a device, pipe or socket): {path}",
        )
    with open(path, "rb") as handle:
        # Past the diff limit only the size and the first bytes (binary or not) matter.
        content = handle.read(DIFF_INPUT_LIMIT + 1)
    return _Before(size=max(info.st_size, len(content)), content=content), stat.S_IMODE(info.st_mode)


def remember_written(reads: ReadLedger, path: str, data: bytes) -> None:
    """Note ``path`` as read with content ``data``, which the tool has just written to it."""
    try:
        reads.record(path, fingerprint_of(data, os.stat(path)))
    except OSError:
        reads.forget(path)
