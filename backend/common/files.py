"""Writing a file so that a crash leaves either the old content or the new, never a torn file."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

__all__ = ["write_atomically"]


def write_atomically(
    path: Path, data: bytes, *, owner_only: bool = False, temp_prefix: str | None = None
) -> None:
    """Write ``data`` to a temporary file beside ``path``, fsync it and rename it over ``path``, then
    fsync the directory so the rename itself survives a power loss (POSIX; Windows has no directory
    handles to sync). ``owner_only`` gives the file mode 0600 from its first byte on."""
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=temp_prefix or f".{path.name}.")
    try:
        if owner_only:
            os.chmod(temp, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    if os.name != "nt":
        directory = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
