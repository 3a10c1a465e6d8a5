"""The event spool: audit and telemetry envelopes on disk until their service took them.

Layout, under ``<runtime data dir>/events/`` (0700)::

    <owner>.lock                     held (locked) by the runtime process that owns <owner>/
    <owner>/<stream>-<ns>-<pid>-<n>.seg

One owner directory per runtime process (``<owner>`` = start time, pid, random), so the runtimes of
several conversations sharing one data directory never write to each other's files. A segment is a
first line that says what the file is, a line of JSON naming its stream (``audit`` or ``telemetry``),
the backend's URL and the tenant and user whose token may send it, then one envelope per line — each
appended with a single ``write``, so a process killed at any instant (kill -9 included) leaves every
line it wrote whole: the kernel has them. Nothing here fsyncs on the way; the outbox makes waiting
segments durable once the service cannot be reached (:meth:`EventSpool.sync`), as the upload queue
does for its entries.

Why not the upload spool's one atomic file per entry (:mod:`agent_runtime.agent_host.uploads.spool`):
a step produces several events, and a temp file, a rename and an unlink per event cost about 170 µs
each against 6 µs for an appended line (measured on this machine) — the difference between meeting and
missing the 0.5 ms a step may spend on audit and telemetry. The conventions are the upload spool's:
private modes, names that sort in the order they were made, entries pinned to the backend (and here
also the tenant and user) they were meant for, leftovers older than a week given up.

A runtime that starts takes over the segments of owners that are gone (their lock is free) and that
are meant for its own backend and identity, by renaming them into its directory (:meth:`EventSpool.
adopt`): two runtimes starting at once cannot both take one (the adopter holds the dead owner's lock
while it moves its files), and a segment sent twice is recorded once (every envelope has its
``eventId``).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_runtime.agent_host.state.files import PRIVATE_FILE_MODE, private_directory, sync_file
from contracts.local_backend import try_lock

__all__ = ["MAX_AGE_S", "SEGMENT_SUFFIX", "EventSpool", "SegmentHeader", "read_segment"]

logger = logging.getLogger(__name__)

SEGMENT_SUFFIX = ".seg"
LOCK_SUFFIX = ".lock"
MAX_AGE_S = 7 * 24 * 3600.0
"""A segment older than this is given up on (its session is long over)."""
_MAGIC = b"COWORK-EVENTS 1\n"
_MAX_HEADER_BYTES = 16 * 1024
_OPEN_SEGMENT = (
    os.O_WRONLY
    | os.O_CREAT
    | os.O_EXCL
    | os.O_APPEND
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


@dataclass(frozen=True, slots=True)
class SegmentHeader:
    """Where a segment's envelopes may go."""

    stream: str
    origin: str
    tenant_id: str
    user_id: str

    def encode(self) -> bytes:
        fields = {
            "stream": self.stream,
            "origin": self.origin,
            "tenantId": self.tenant_id,
            "userId": self.user_id,
        }
        return _MAGIC + json.dumps(fields, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"

    @classmethod
    def decode(cls, line: bytes) -> SegmentHeader:
        fields: Any = json.loads(line)
        if not isinstance(fields, dict):
            raise ValueError("the segment's description is not an object")
        values: list[str] = []
        for key in ("stream", "origin", "tenantId", "userId"):
            value = fields.get(key)
            if not isinstance(value, str) or not value:
                raise ValueError(f"the segment's description has no {key}")
            values.append(value)
        return cls(*values)


def read_segment(data: bytes) -> tuple[SegmentHeader, list[bytes]]:
    """The header and the whole lines of a segment's bytes; ``ValueError`` if it is not a segment. A
    line cut short (a power cut while it was written) is left out."""
    if not data.startswith(_MAGIC):
        raise ValueError("not an event spool segment")
    end = data.find(b"\n", len(_MAGIC), len(_MAGIC) + _MAX_HEADER_BYTES)
    if end < 0:
        raise ValueError("the segment's description is cut short")
    header = SegmentHeader.decode(data[len(_MAGIC) : end])
    body = data[end + 1 :]
    whole = body[: body.rfind(b"\n") + 1]
    return header, [line for line in whole.split(b"\n") if line]


class EventSpool:
    """One runtime process's share of ``directory``: :meth:`open` it before writing, :meth:`close` it
    at the end (what is unsent stays for the next runtime)."""

    def __init__(self, directory: Path, *, clock: Any = time.time) -> None:
        self.directory = directory
        self._clock = clock
        self._owner: Path | None = None
        self._lock = contextlib.ExitStack()
        self._numbers = itertools.count()

    @property
    def owner(self) -> Path | None:
        """This process's directory, once opened."""
        return self._owner

    def open(self) -> Path:
        """Take an owner directory (locked for this process's life); its path. ``OSError`` when the
        data directory cannot be written."""
        if self._owner is not None:
            return self._owner
        private_directory(self.directory)
        for _ in range(3):
            name = f"{time.time_ns():020d}-{os.getpid()}-{secrets.token_hex(4)}"
            # The lock first, then the directory: a directory whose lock is free is an owner that is gone.
            if self._lock.enter_context(try_lock(self.directory / f"{name}{LOCK_SUFFIX}")):
                owner = self.directory / name
                owner.mkdir(mode=0o700)
                self._owner = owner
                return owner
            self._lock.close()  # another process locked this fresh name first: choose another
        raise OSError(f"could not take an event spool directory in {self.directory}")

    def close(self) -> None:
        """Release the owner directory; removed when nothing is left in it."""
        owner, self._owner = self._owner, None
        self._lock.close()
        if owner is not None:
            _remove_if_empty(owner, self.directory / f"{owner.name}{LOCK_SUFFIX}")

    def new_segment(self, header: SegmentHeader) -> tuple[Path, int]:
        """A new segment with its header written: its path and a descriptor open for appending."""
        owner = self.open()
        stamp = f"{time.time_ns():020d}-{os.getpid()}-{next(self._numbers):06d}"
        path = owner / f"{header.stream}-{stamp}{SEGMENT_SUFFIX}"
        fd = os.open(path, _OPEN_SEGMENT, PRIVATE_FILE_MODE)
        try:
            append(fd, header.encode())
        except OSError:
            os.close(fd)
            with contextlib.suppress(OSError):
                path.unlink()
            raise
        return path, fd

    def read(self, path: Path) -> list[bytes] | None:
        """The envelopes of a segment; None when it is gone or unreadable (then it is removed)."""
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            logger.error("cannot read the event spool segment %s: %s", path.name, exc)
            return None
        try:
            return read_segment(data)[1]
        except ValueError as exc:
            logger.error("removing the unreadable event spool segment %s: %s", path.name, exc)
            self.remove(path)
            return None

    def sync(self, path: Path) -> None:
        """fsync a segment (its service cannot be reached: it must survive a power cut too)."""
        with contextlib.suppress(FileNotFoundError):
            sync_file(path)

    def remove(self, path: Path) -> None:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()

    def adopt(self, stream: str, wanted: SegmentHeader) -> list[Path]:
        """Move the ``stream`` segments of owners that are gone, meant for ``wanted``'s backend, tenant
        and user, into this owner's directory; their new paths, oldest first. Never raises for what
        other processes left behind (logged); ``OSError`` only when this owner cannot be opened."""
        owner = self.open()
        try:
            entries = list(os.scandir(self.directory))
        except OSError as exc:
            logger.warning("cannot look for earlier runtimes' events in %s: %s", self.directory, exc)
            return []
        adopted: list[Path] = []
        for entry in entries:
            if not entry.is_dir(follow_symlinks=False) or entry.name == owner.name:
                continue
            adopted += self._adopt_from(Path(entry.path), stream, wanted)
        adopted.sort(key=lambda path: path.name.split("-", 1)[1])
        return adopted

    def _adopt_from(self, gone: Path, stream: str, wanted: SegmentHeader) -> list[Path]:
        assert self._owner is not None
        lock = self.directory / f"{gone.name}{LOCK_SUFFIX}"
        moved: list[Path] = []
        try:
            with try_lock(lock) as taken:
                if not taken:
                    return []  # its runtime is alive
                for path in sorted(gone.glob(f"{stream}-*{SEGMENT_SUFFIX}")):
                    if self._wanted(path, wanted):
                        target = self._owner / path.name
                        os.replace(path, target)
                        moved.append(target)
        except OSError as exc:
            logger.warning("cannot take over the events spooled in %s: %s", gone.name, exc)
            return moved
        _remove_if_empty(gone, lock)
        return moved

    def _wanted(self, path: Path, wanted: SegmentHeader) -> bool:
        """Whether ``path`` is for ``wanted``; too old or unreadable ones are removed on the way."""
        if path.is_symlink() or not path.is_file():
            return False  # never ours: a link could make a segment of any file
        try:
            age = self._clock() - path.stat().st_mtime
            with path.open("rb") as stream:
                head = stream.read(len(_MAGIC) + _MAX_HEADER_BYTES)
        except OSError:
            return False
        try:
            header, _ = read_segment(head)
        except ValueError as exc:
            logger.error("removing the unreadable event spool segment %s: %s", path.name, exc)
            self.remove(path)
            return False
        if age > MAX_AGE_S:
            logger.warning(
                "giving up on the %s events spooled in %s more than a week ago", header.stream, path.name
            )
            self.remove(path)
            return False
        return header == wanted


def append(fd: int, data: bytes) -> None:
    """Write all of ``data`` at the end of the file (one ``write`` but for huge data)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _remove_if_empty(directory: Path, lock: Path) -> None:
    try:
        directory.rmdir()
    except OSError:
        return  # segments are left: the next runtime takes them
    with contextlib.suppress(OSError):
        lock.unlink()
