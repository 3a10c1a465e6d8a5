"""What the file tools share: OS errors in our words, text decoding with the §6.3 fallback, and when
a change is small enough to make on the event loop."""

from __future__ import annotations

import codecs
import os

from agent_runtime.tool_runtime.errors import ToolFailure, describe_os_error
from agent_runtime.tool_runtime.platform.encoding import codec_name
from contracts.errors import ErrorCode

__all__ = ["INLINE_BYTES", "decode_with_fallback", "decoder_for", "os_failure", "runs_inline"]

INLINE_BYTES = 16 * 1024
"""A change to a file of at most this much, with at most this much new text, runs on the event loop."""


def runs_inline(path: str, new_bytes: int) -> bool:
    """Whether WriteFile or EditFile can change ``path`` on the event loop rather than in a thread.

    A small change costs about 0.4–1 ms there (the atomic write's two fsyncs, a diff of at most 16 KB
    each side), and a thread hop there and back costs as much again in a busy runtime, where the loop
    and the worker wake each other across cores; a large one would hold up the loop."""
    if new_bytes > INLINE_BYTES:
        return False
    try:
        return os.stat(path).st_size <= INLINE_BYTES
    except OSError:
        return True  # absent, or it fails the same way in the change itself, which reports it


def os_failure(exc: OSError, action: str, path: str) -> ToolFailure:
    """An OS error on ``path`` as the seed's code: missing → FILE_NOT_FOUND, others PERMISSION_DENIED."""
    if isinstance(exc, (FileNotFoundError, NotADirectoryError)):
        return ToolFailure(ErrorCode.FILE_NOT_FOUND, f"File not found: {path}")
    return ToolFailure(ErrorCode.PERMISSION_DENIED, f"Cannot {action} {path}: {describe_os_error(exc)}")


def decoder_for(encoding: str) -> str:
    """The codec that reads ``encoding``; UTF-8 is read as ``utf-8-sig`` so a BOM is stripped."""
    return "utf-8-sig" if codec_name(encoding) == "utf-8" else encoding


def decode_with_fallback(data: bytes, chain: tuple[str, ...]) -> str:
    """Decode with the first encoding of ``chain`` that fits; the chain ends in latin-1, which always does."""
    for encoding in chain:
        try:
            return codecs.decode(data, decoder_for(encoding))
        except UnicodeDecodeError:
            continue
    return data.decode("latin-1")
