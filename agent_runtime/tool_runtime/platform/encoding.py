"""Text encodings (seed 003 §6.3): names, BOMs and telling binary content from text."""

from __future__ import annotations

import codecs
import functools

__all__ = ["BINARY_SNIFF_BYTES", "codec_name", "is_wide_unicode", "looks_binary", "text_codec"]

#: How much of a file's start is examined for NUL bytes to call it binary.
BINARY_SNIFF_BYTES = 8192


@functools.lru_cache(maxsize=256)
def codec_name(name: str) -> str:
    """The canonical codec name (``"UTF8"`` → ``"utf-8"``, ``"macRoman"`` → ``"mac-roman"``)."""
    return codecs.lookup(name).name


@functools.lru_cache(maxsize=256)
def text_codec(name: str) -> str | None:
    """The canonical name of a *text* encoding, or ``None`` for unknown names and bytes-to-bytes codecs.

    ``codecs.lookup`` also knows ``base64``, ``zlib`` and ``rot13``, which are not file encodings.
    """
    try:
        info = codecs.lookup(name)
    except (LookupError, ValueError):
        return None
    if not getattr(info, "_is_text_encoding", True):
        return None
    return info.name


def is_wide_unicode(name: str) -> bool:
    """UTF-16 and UTF-32 text is full of NUL bytes without being binary."""
    return codec_name(name).startswith(("utf-16", "utf-32"))


def looks_binary(sample: bytes) -> bool:
    """A NUL byte in the first bytes: how git and grep tell binary files from text."""
    return b"\x00" in sample[:BINARY_SNIFF_BYTES]
