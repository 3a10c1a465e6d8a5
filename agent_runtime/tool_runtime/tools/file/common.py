"""What the three file tools share: OS errors in our words, text decoding with the §6.3 fallback."""

from __future__ import annotations

import codecs

from agent_runtime.tool_runtime.errors import ToolFailure, describe_os_error
from agent_runtime.tool_runtime.platform.encoding import codec_name
from contracts.errors import ErrorCode

__all__ = ["decode_with_fallback", "decoder_for", "os_failure"]


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
