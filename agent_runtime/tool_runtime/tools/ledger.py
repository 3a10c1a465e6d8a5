"""Which files this session has read, as they were then: EditFile edits only what the model has seen.

ReadFile records each file it reads (size, mtime and, up to ``HASH_LIMIT`` bytes, a SHA-256 of the
content); WriteFile and EditFile record what they wrote; DeleteFile forgets. EditFile refuses a file
with no record, or one whose content changed on disk since (the user edited it meanwhile): writing
over it would silently throw away the user's change. A file touched without a change (same hash,
new mtime) still counts as read.

One ledger per router, and the runtime process has one router per session. Thread-safe: tools record
from worker threads.
"""

from __future__ import annotations

import hashlib
import os
import threading
from dataclasses import dataclass

__all__ = ["HASH_LIMIT", "FileFingerprint", "ReadLedger", "fingerprint_fd", "fingerprint_of"]

#: Files up to this size are hashed when read; larger ones are compared by size and mtime only.
HASH_LIMIT = 16 * 1024 * 1024
_CHUNK = 1024 * 1024


@dataclass(frozen=True, slots=True)
class FileFingerprint:
    size: int
    mtime_ns: int
    digest: bytes | None

    def matches(self, other: FileFingerprint) -> bool:
        if self.size != other.size:
            return False
        if self.digest is not None and other.digest is not None:
            return self.digest == other.digest
        return self.mtime_ns == other.mtime_ns


def fingerprint_of(data: bytes, info: os.stat_result) -> FileFingerprint:
    """The fingerprint of a file whose whole content is ``data`` and whose stat is ``info``."""
    digest = hashlib.sha256(data).digest() if len(data) <= HASH_LIMIT else None
    return FileFingerprint(size=len(data), mtime_ns=info.st_mtime_ns, digest=digest)


def fingerprint_fd(fd: int) -> FileFingerprint:
    """The fingerprint of the open regular file ``fd``, read from its start (blocking I/O)."""
    info = os.fstat(fd)
    if info.st_size > HASH_LIMIT:
        return FileFingerprint(size=info.st_size, mtime_ns=info.st_mtime_ns, digest=None)
    hasher = hashlib.sha256()
    size, offset = 0, 0
    while True:
        chunk = os.pread(fd, _CHUNK, offset) if hasattr(os, "pread") else _read_at(fd, offset)
        if not chunk:
            break
        hasher.update(chunk)
        size += len(chunk)
        offset += len(chunk)
    return FileFingerprint(size=size, mtime_ns=info.st_mtime_ns, digest=hasher.digest())


def _read_at(fd: int, offset: int) -> bytes:
    os.lseek(fd, offset, os.SEEK_SET)
    return os.read(fd, _CHUNK)


class ReadLedger:
    def __init__(self) -> None:
        self._seen: dict[str, FileFingerprint] = {}
        self._lock = threading.Lock()

    def record(self, path: str, fingerprint: FileFingerprint) -> None:
        with self._lock:
            self._seen[path] = fingerprint

    def forget(self, path: str) -> None:
        with self._lock:
            self._seen.pop(path, None)

    def get(self, path: str) -> FileFingerprint | None:
        with self._lock:
            return self._seen.get(path)
