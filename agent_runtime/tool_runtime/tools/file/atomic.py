"""Crash-safe file replacement: a temp file beside the target, fsync, rename, fsync the directory.

After a crash at any point the target is either wholly its old content or wholly the new one; at
worst a ``.<name>.cowork-tmp-XXXXXXXX`` file is left beside it.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import sys

__all__ = ["TEMP_MARKER", "write_atomically"]

TEMP_MARKER = ".cowork-tmp-"
# A temp name is ".<name>.cowork-tmp-<8 hex>"; the name part is cut so the whole stays within 255.
_TEMP_NAME_ROOM = 255 - len(TEMP_MARKER) - 1 - 8


def write_atomically(path: str, data: bytes, *, mode: int | None) -> None:
    """Replace ``path`` with ``data``; ``mode`` is the existing file's permissions to keep (or None).

    A new file is created with mode 0666 less the umask, as any program creating a file would get;
    mkstemp's 0600 would make files the user's other tools cannot read.
    """
    directory, name = os.path.split(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOFOLLOW", 0)
    while True:
        temp = os.path.join(directory, f".{name[:_TEMP_NAME_ROOM]}{TEMP_MARKER}{secrets.token_hex(4)}")
        try:
            fd = os.open(temp, flags, 0o666 if mode is None else 0o600)
            break
        except FileExistsError:
            continue
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if mode is not None and hasattr(os, "fchmod"):
                os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        if mode is not None and not hasattr(os, "fchmod"):
            os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    _sync_directory(directory)


def _sync_directory(directory: str) -> None:
    # The rename is durable only once the directory entry is on disk. Windows has no directory
    # handles to fsync (NTFS journals the rename itself); some file systems refuse: both are fine.
    if sys.platform == "win32":
        return
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
