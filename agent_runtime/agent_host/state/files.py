"""Durable file primitives: a private directory and an all-or-nothing replace of one file.

Hand-written on ``os`` because the guarantees are in the order of the calls (create exclusively with
the final mode, fsync the data, rename, fsync the directory) and no library in the stack exposes them:
``tempfile`` cannot open with 0600 *and* ``O_EXCL`` in a caller-chosen name pattern the store relies on
to find leftovers, and nothing there fsyncs the directory.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

__all__ = [
    "PRIVATE_DIR_MODE",
    "PRIVATE_FILE_MODE",
    "fsync_directory",
    "private_directory",
    "replace_file",
    "sync_file",
]

PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600
TEMP_SUFFIX = ".tmp"

_CAN_SYNC_DIRECTORIES = os.name != "nt"  # Windows cannot open a directory to fsync it
_OPEN_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


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


def fsync_directory(path: Path) -> None:
    """Persist the directory entry changes (a rename, a new file) of ``path`` — POSIX only."""
    if not _CAN_SYNC_DIRECTORIES:
        return
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def temp_name(final_name: str) -> str:
    """A unique hidden sibling name for ``final_name``; ``temp_prefix`` finds every one of them."""
    return f"{temp_prefix(final_name)}{secrets.token_hex(8)}{TEMP_SUFFIX}"


def temp_prefix(final_name: str) -> str:
    return f".{final_name}."


def replace_file(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Make ``path`` hold exactly ``data``, durably, or leave it as it was.

    A process killed at any instant leaves either the old complete file or the new complete one:
    the bytes go to a new temp file in the same directory (0600, ``O_EXCL``), are fsynced, and the
    temp file is renamed over ``path`` (atomic on POSIX and on NTFS via ``os.replace``); the directory
    is then fsynced so the rename itself survives a power cut. On any failure the temp file is removed
    and the ``OSError`` propagates.

    ``durable=False`` leaves out both fsyncs: the replacement is still all or nothing for every reader
    and survives the writer's own crash (the kernel has the bytes), but not a power cut — for files
    whose loss then costs little, or that are made durable later (:func:`sync_file`).
    """
    temp = path.with_name(temp_name(path.name))
    fd = os.open(temp, _OPEN_NEW, PRIVATE_FILE_MODE)
    try:
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink(missing_ok=True)
        raise
    if durable:
        fsync_directory(path.parent)


def sync_file(path: Path) -> None:
    """Make a file written with ``replace_file(..., durable=False)`` durable after all: its data, then
    its directory entry."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    fsync_directory(path.parent)
