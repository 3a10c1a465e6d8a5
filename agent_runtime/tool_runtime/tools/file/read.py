"""ReadFile (seed 003 §4.1): a file's lines as text, streamed so that no file is ever loaded whole."""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import stat
import sys
from collections.abc import Iterator
from typing import BinaryIO

from pydantic import Field

from agent_runtime.tool_runtime.errors import ToolFailure
from agent_runtime.tool_runtime.output.results import ToolOutput
from agent_runtime.tool_runtime.output.truncate import HeadTail
from agent_runtime.tool_runtime.platform.encoding import (
    BINARY_SNIFF_BYTES,
    is_wide_unicode,
    looks_binary,
    text_codec,
)
from agent_runtime.tool_runtime.tools.base import Arguments, Tool, ToolContext
from agent_runtime.tool_runtime.tools.file.common import decoder_for, os_failure
from agent_runtime.tool_runtime.tools.ledger import fingerprint_fd
from contracts.enums import Capability, ToolName
from contracts.errors import ErrorCode

__all__ = ["ReadFile", "ReadFileArguments", "open_regular_file"]

_CHUNK = 64 * 1024
# Files up to this size are read on the event loop: a hop to a worker thread costs more than the read.
_INLINE_READ_BYTES = 256 * 1024


class ReadFileArguments(Arguments):
    path: str = Field(min_length=1, description="Absolute file path to read")
    offset: int = Field(
        default=1, ge=1, description="Line number to start reading from (1-based). Default: 1"
    )
    limit: int | None = Field(
        default=None, ge=1, description="Maximum number of lines to return. Default: all"
    )
    encoding: str = Field(default="utf-8", min_length=1, description="File encoding. Default: utf-8")


class ReadFile(Tool[ReadFileArguments]):
    name = ToolName.READ_FILE.value
    capability = Capability.FILE_READ
    description = (
        "Read the contents of a file at the given path. "
        "For large files, read a range of lines with offset and limit."
    )
    arguments = ReadFileArguments

    async def run(self, args: ReadFileArguments, context: ToolContext) -> ToolOutput:
        encoding = text_codec(args.encoding)
        if encoding is None:
            raise ToolFailure(
                ErrorCode.INVALID_REQUEST,
                f"arguments.encoding is not a known text encoding: {args.encoding[:60]!r}",
            )
        path = context.platform.normalize_path(
            args.path, field="arguments.path", workspace_root=context.workspace_root
        )
        handle, info = open_regular_file(path, context.max_file_size_bytes)
        size = info.st_size
        with handle:
            if size <= _INLINE_READ_BYTES:
                return _read_recorded(path, handle, size, encoding, args, context)
            return await asyncio.to_thread(_read_recorded, path, handle, size, encoding, args, context)


def _read_recorded(
    path: str, handle: BinaryIO, size: int, encoding: str, args: ReadFileArguments, context: ToolContext
) -> ToolOutput:
    """``_read``, then the file noted as read (as it is now) so that EditFile may change it."""
    output = _read(handle, size, encoding, args, context)
    if context.reads is not None:
        with contextlib.suppress(OSError):
            context.reads.record(path, fingerprint_fd(handle.fileno()))
    return output


def open_regular_file(path: str, max_size: int | None) -> tuple[BinaryIO, os.stat_result]:
    """The file opened for reading (unbuffered) with its status; a directory, a device, a pipe or a file
    over ``max_size`` is a ``ToolFailure`` saying which."""
    if sys.platform == "win32" and os.path.isdir(path):
        # Windows refuses to open a directory (EACCES); say what it is instead.
        raise ToolFailure(ErrorCode.INVALID_REQUEST, f"arguments.path is a directory, not a file: {path}")
    # O_NONBLOCK: opening a FIFO must not wait for a writer before we can see it is not a file.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise os_failure(exc, "read", path) from exc
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise ToolFailure(ErrorCode.INVALID_REQUEST, f"arguments.path is a directory, not a file: {path}")
        if not stat.S_ISREG(info.st_mode):
            # Devices and pipes (/dev/zero, a FIFO) never end or block: not something to read.
            raise ToolFailure(
                ErrorCode.INVALID_REQUEST,
                f"arguments.path is not a regular file (a device, pipe or socket): {path}",
            )
        if max_size is not None and info.st_size > max_size:
            raise ToolFailure(
                ErrorCode.FILE_TOO_LARGE,
                f"File is {info.st_size} bytes, over the {max_size}-byte limit: {path}",
            )
        return os.fdopen(fd, "rb", buffering=0), info
    except BaseException:
        os.close(fd)
        raise


def _read(
    handle: BinaryIO, size: int, encoding: str, args: ReadFileArguments, context: ToolContext
) -> ToolOutput:
    try:
        sample = handle.read(BINARY_SNIFF_BYTES)
        if looks_binary(sample) and not is_wide_unicode(encoding):
            return ToolOutput(text=f"Binary file, {size} bytes")
        for candidate in context.platform.fallback_encodings(encoding):
            try:
                return _select_lines(_chunks(handle, sample), candidate, args, context.max_output_bytes)
            except UnicodeDecodeError:
                handle.seek(0)
                sample = handle.read(BINARY_SNIFF_BYTES)
    except OSError as exc:
        raise os_failure(exc, "read", args.path) from exc
    # latin-1 ends every chain and decodes any byte, so the loop always returns.
    raise ToolFailure(ErrorCode.TOOL_EXECUTION_FAILED, "the file could not be decoded")


def _chunks(handle: BinaryIO, first: bytes) -> Iterator[bytes]:
    """``first`` (already read), then the rest of the file, then one empty chunk for the end."""
    chunk, wanted = first, BINARY_SNIFF_BYTES
    while chunk:
        yield chunk
        if len(chunk) < wanted:
            break  # a short read of a regular file is its end: spare the extra read
        wanted = _CHUNK
        chunk = handle.read(_CHUNK)
    yield b""


def _select_lines(
    chunks: Iterator[bytes], encoding: str, args: ReadFileArguments, max_output: int
) -> ToolOutput:
    """Lines ``offset`` … ``offset + limit - 1`` (lines end at ``\\n``; endings are kept as written).

    Whole chunks are skipped or kept by counting their newlines; only the chunks where the range
    starts or ends are walked line by line.
    """
    decoder = codecs.getincrementaldecoder(decoder_for(encoding))("strict")
    first = args.offset
    stop = None if args.limit is None else first + args.limit  # first line number not returned
    kept = HeadTail(max_output)
    line = 1  # the number of the line the next character belongs to
    last_char = ""
    for chunk in chunks:
        text = decoder.decode(chunk, final=not chunk)
        if text:
            last_char = text[-1]
        begin = 0
        if line < first:
            newlines = text.count("\n")
            if line + newlines < first:
                line += newlines
                continue
            begin, line = _after_lines(text, 0, first - line), first
        end = len(text)
        if stop is not None:
            newlines = text.count("\n", begin)
            if line + newlines >= stop:
                end, line = _after_lines(text, begin, stop - line), stop
            else:
                line += newlines
        if end > begin:
            kept.feed(text[begin:end].encode("utf-8", errors="surrogatepass"))
        if stop is not None and line >= stop:
            break
    if kept.total == 0 and first > 1:
        # Every line holds at least its newline, so nothing kept means the range starts past the end.
        lines = line - 1 if last_char in ("\n", "") else line
        return ToolOutput(text=f"[offset {first} is past the end of the file, which has {lines} lines]")
    return ToolOutput(text=kept.render())


def _after_lines(text: str, position: int, count: int) -> int:
    """The index just past the ``count``-th newline at or after ``position`` (it exists)."""
    for _ in range(count):
        position = text.index("\n", position) + 1
    return position
