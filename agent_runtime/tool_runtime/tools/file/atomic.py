"""Crash-safe replacement of a user's file (:func:`contracts.atomic.write_atomically`): after a crash
at any point the target is either wholly its old content or wholly the new one; at worst a
``.<name>.cowork-tmp-<hex>.tmp`` file is left beside it, named so that its owner can tell where it
came from."""

from __future__ import annotations

import os

from contracts import atomic

__all__ = ["TEMP_MARKER", "write_atomically"]

TEMP_MARKER = "cowork-tmp-"


def write_atomically(path: str, data: bytes, *, mode: int | None) -> None:
    """Replace ``path`` with ``data``; ``mode`` is the existing file's permissions to keep, or None for
    a new file, created with mode 0666 less the umask as any program creating a file would get (0600
    would make files the user's other tools cannot read)."""
    prefix = atomic.temp_prefix(os.path.basename(path), TEMP_MARKER)
    atomic.write_atomically(path, data, mode=mode, prefix=prefix)
