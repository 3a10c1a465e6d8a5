"""One way to replace a file so that a crash leaves either the old content or the new, never a torn
file: a temp file in the same directory, written, flushed and fsynced, renamed over the target with
``os.replace`` (atomic on POSIX and on NTFS), then the directory fsynced so that the rename itself
survives a power cut (POSIX only: Windows cannot open a directory, and NTFS journals the rename).

Hand-written on ``os`` because the guarantees lie in the order of the calls and in how the temp file
is created — exclusively, with its final permissions from the first byte, under a name its caller can
recognise as a leftover — and neither ``tempfile`` nor any library in the stack fsyncs the directory.

``write_atomically`` takes bytes; ``atomic_writer`` streams (an archive being packed, a file being
copied) and lets the caller check the written file before it takes the target's place.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

__all__ = [
    "TEMP_SUFFIX",
    "PendingFile",
    "atomic_writer",
    "fsync_directory",
    "temp_prefix",
    "write_atomically",
]

TEMP_SUFFIX = ".tmp"
"""Every temp file ends so: ``.<name>.<random hex>.tmp`` unless the caller chose another prefix."""

_MAX_NAME = 255  # the longest file name on the file systems we run on
_TOKEN_HEX = 16
_CAN_SYNC_DIRECTORIES = os.name != "nt"
_UNSUPPORTED = frozenset({errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP})
_OPEN_NEW = (
    os.O_WRONLY
    | os.O_CREAT
    | os.O_EXCL
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
    | getattr(os, "O_NOFOLLOW", 0)
)


def temp_prefix(final_name: str, marker: str = "") -> str:
    """The start of every temp file's name for ``final_name``: how a caller finds its own leftovers.
    ``marker`` follows the name (``".notes.txt.cowork-tmp-"``: a user who finds one knows whose it
    is); a long name is cut so that the whole temp name stays a valid file name."""
    room = _MAX_NAME - len(TEMP_SUFFIX) - _TOKEN_HEX - 2 - len(marker)
    return f".{final_name[:room]}.{marker}"


def fsync_directory(directory: str | os.PathLike[str]) -> None:
    """Make the entries changed in ``directory`` (a rename, a new or removed file) durable; a no-op on
    Windows. Raises ``OSError`` when the directory cannot be opened or synced."""
    if not _CAN_SYNC_DIRECTORIES:
        return
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class PendingFile:
    """The temp file of an :func:`atomic_writer` block: write to :attr:`stream`; :attr:`temporary`
    names it for a check before it replaces the target (call :meth:`flush` first)."""

    def __init__(self, temporary: Path, stream: BinaryIO) -> None:
        self.temporary = temporary
        self.stream = stream

    def write(self, data: bytes) -> None:
        self.stream.write(data)

    def flush(self) -> None:
        """Hand everything written so far to the operating system (readable through :attr:`temporary`)."""
        self.stream.flush()

    def sync(self) -> None:
        """Flush and fsync now, so that a last check right before the rename does not wait behind the
        disk (the block's end then has nothing left to sync)."""
        self.stream.flush()
        os.fsync(self.stream.fileno())


@contextlib.contextmanager
def atomic_writer(
    path: str | os.PathLike[str],
    *,
    mode: int | None = None,
    durable: bool = True,
    prefix: str | None = None,
) -> Iterator[PendingFile]:
    """Replace ``path`` with what the block writes, when the block ends without an exception; on an
    exception (or a failed write, sync or rename) the temp file is removed, ``path`` is untouched,
    and the exception propagates.

    ``mode``: the file's permission bits, exactly, from its creation on (0o600 keeps a secret from
    ever being readable by others, even briefly); None creates it as any program would, 0o666 less
    the umask. ``durable=False`` leaves out both fsyncs: still all or nothing for every reader and
    through the writer's own crash, but not through a power cut. ``prefix`` replaces the temp file's
    default name start (:func:`temp_prefix`); the random part and :data:`TEMP_SUFFIX` follow it.
    """
    target = Path(path)
    start = prefix if prefix is not None else temp_prefix(target.name)
    while True:
        temporary = target.with_name(f"{start}{secrets.token_hex(_TOKEN_HEX // 2)}{TEMP_SUFFIX}")
        try:
            fd = os.open(temporary, _OPEN_NEW, 0o600 if mode is not None else 0o666)
            break
        except FileExistsError:
            continue
    try:
        with open(fd, "wb") as stream:
            if mode is not None:
                _set_mode(stream.fileno(), temporary, mode)
            yield PendingFile(temporary, stream)
            stream.flush()
            if durable:
                os.fsync(stream.fileno())
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    if durable:
        try:
            fsync_directory(target.parent)
        except OSError as exc:
            # The new content is in place; some file systems (network shares, FUSE) cannot sync a
            # directory. Only an error other than "not supported" is worth reporting.
            if exc.errno not in _UNSUPPORTED:
                raise


def write_atomically(
    path: str | os.PathLike[str],
    data: bytes,
    *,
    mode: int | None = None,
    durable: bool = True,
    prefix: str | None = None,
) -> None:
    """Make ``path`` hold exactly ``data``, or leave it as it was (see :func:`atomic_writer` for the
    arguments). Raises ``OSError``."""
    with atomic_writer(path, mode=mode, durable=durable, prefix=prefix) as pending:
        fd = pending.stream.fileno()
        view = memoryview(data)
        while view:  # unbuffered: the bytes go straight to the file, no copy in a buffer first
            view = view[os.write(fd, view) :]


def _set_mode(fd: int, temporary: Path, mode: int) -> None:
    if mode == 0o600:
        return  # created so; nothing to change
    if hasattr(os, "fchmod"):
        os.fchmod(fd, mode)
    else:  # Windows: only the read-only bit exists, set through the name
        os.chmod(temporary, mode)
