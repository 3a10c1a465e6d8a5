"""Durable file primitives of the runtime's private data: an owner-only directory, an all-or-nothing
replace of one owner-only file (:func:`contracts.atomic.write_atomically` with mode 0600), and making
a file written without fsync durable after all."""

from __future__ import annotations

import os
from pathlib import Path

from contracts.atomic import TEMP_SUFFIX, fsync_directory, temp_prefix, write_atomically

__all__ = [
    "PRIVATE_DIR_MODE",
    "PRIVATE_FILE_MODE",
    "TEMP_SUFFIX",
    "fsync_directory",
    "private_directory",
    "replace_file",
    "sync_file",
    "temp_prefix",
]

PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600


def private_directory(path: Path) -> bool:
    """Make ``path`` (and a missing parent) owner-only on creation; True if it was created now.

    An existing directory keeps its mode: if an administrator made it read-only, writes must fail
    loudly rather than be quietly re-opened.
    """
    if path.is_dir():
        return False
    path.parent.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
    try:
        path.mkdir(mode=PRIVATE_DIR_MODE)
    except FileExistsError:
        return False
    if os.name != "nt":
        os.chmod(path, PRIVATE_DIR_MODE)  # mkdir's mode is filtered by the umask; be exact
    fsync_directory(path.parent)
    return True


def replace_file(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Make ``path`` hold exactly ``data`` (an owner-only file), durably, or leave it as it was.

    A process killed at any instant leaves either the old complete file or the new complete one; a
    temp file it leaves behind starts with ``temp_prefix(path.name)`` and ends with ``TEMP_SUFFIX``.
    ``durable=False`` leaves out both fsyncs: the replacement is still all or nothing for every reader
    and survives the writer's own crash (the kernel has the bytes), but not a power cut — for files
    whose loss then costs little, or that are made durable later (:func:`sync_file`).
    """
    write_atomically(path, data, mode=PRIVATE_FILE_MODE, durable=durable)


def sync_file(path: Path) -> None:
    """Make a file written with ``replace_file(..., durable=False)`` durable after all: its data, then
    its directory entry."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    fsync_directory(path.parent)
