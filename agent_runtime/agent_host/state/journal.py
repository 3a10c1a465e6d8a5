"""The step journal: the state after each step made durable with one small append, not a whole
checkpoint.

Every step changes the session by a few messages and counters, yet replacing the checkpoint rewrites
its whole thread into a new file and costs two fsyncs and a rename. So between full checkpoints the
store appends records to ``<sessionId>.journal`` beside the checkpoint, each made durable with one
``fdatasync``: the snapshot without its messages, and the messages added since the checkpoint it
builds on. Every record stands alone (it repeats all messages since that checkpoint), so a load
needs only the checkpoint and the journal's last good record; once the records together grow as
large as the checkpoint, the next write is a full checkpoint again and the journal starts over.

A record names its base by the checkpoint's length and CRC-32 and is applied only to that exact
checkpoint: a later checkpoint makes every earlier record stale at once, with no need to empty the
journal durably. Records are only ever appended, so a record torn by a crash fails its own CRC and
the one before it, intact, is the latest state — which is right, since the runtime acts on a state
(runs the step's tools, calls the model) only once its record is on disk.

Record layout: ``cowork-journal 1 <base length> <base crc> <body length> <body crc>\\n`` then the
body (JSON: ``{"baseMessages": n, "envelope": <snapshot with no messages>, "messages": [...]}``).

The file is grown ahead of the records with zeros (:data:`GROW_BYTES` at a time), so an append
only overwrites data that is already there: its ``fdatasync`` then has no size or block allocation
to commit to the file system's journal and only writes the record — 0.09 against 0.15 ms alone, and
it no longer carries along the metadata other files changed meanwhile (the event log's appends, the
upload spool's files), which is what made it cost about 0.3 ms inside the runtime. A reader stops at
the zeros as it does at a torn record.
"""

from __future__ import annotations

import json
import logging
import os
import zlib
from pathlib import Path
from typing import Any

from agent_runtime.agent_host.state.files import PRIVATE_FILE_MODE, fsync_directory

__all__ = ["GROW_BYTES", "JOURNAL_SUFFIX", "StepJournal", "encode_record", "latest_state"]

logger = logging.getLogger(__name__)

JOURNAL_SUFFIX = ".journal"
GROW_BYTES = 64 * 1024
"""How far ahead of its records the journal file is filled with zeros (module docstring)."""
_MAGIC = b"cowork-journal 1"
_OPEN = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
# macOS has no fdatasync; its fsync is what flushes there.
_datasync = getattr(os, "fdatasync", os.fsync)


def encode_record(base: bytes, base_messages: int, envelope: bytes, messages: list[bytes]) -> bytes:
    """A record: ``messages`` appended to the ``base_messages`` of checkpoint ``base``, and the rest of
    the snapshot replaced by ``envelope`` (the snapshot's JSON with no messages)."""
    body = b"".join(
        [
            b'{"baseMessages":%d,"envelope":' % base_messages,
            envelope,
            b',"messages":[',
            b",".join(messages),
            b"]}",
        ]
    )
    header = b"%s %d %d %d %d\n" % (_MAGIC, len(base), zlib.crc32(base), len(body), zlib.crc32(body))
    return header + body


def latest_state(base: bytes, journal: bytes) -> bytes | None:
    """The snapshot, as JSON, that the journal's last good record for checkpoint ``base`` makes of
    it; None when no record is for this checkpoint (all stale: a later checkpoint holds them)."""
    found: bytes | None = None
    base_crc = zlib.crc32(base)
    offset = 0
    while offset < len(journal):
        parsed = _record_at(journal, offset)
        if parsed is None:
            break  # torn or damaged: nothing after it can be trusted either
        body, offset, base_length, record_base_crc = parsed
        if base_length == len(base) and record_base_crc == base_crc:
            found = body
    if found is None:
        return None
    try:
        document: dict[str, Any] = json.loads(found)
        kept = json.loads(base)["transcript"]["messages"]
        envelope = document["envelope"]
        if len(kept) != document["baseMessages"]:
            return None
        envelope["transcript"]["messages"] = kept + document["messages"]
    except (ValueError, KeyError, TypeError, RecursionError):
        logger.warning("ignoring a step journal record that does not fit its checkpoint")
        return None
    return json.dumps(envelope, ensure_ascii=False, separators=(",", ":")).encode()


def _record_at(journal: bytes, offset: int) -> tuple[bytes, int, int, int] | None:
    """The body at ``offset``, the offset after it, and its base's length and CRC; None if torn."""
    end = journal.find(b"\n", offset, offset + 200)
    if end < 0:
        return None
    parts = journal[offset:end].split(b" ")
    if len(parts) != 6 or b" ".join(parts[:2]) != _MAGIC:
        return None
    try:
        base_length, base_crc, body_length, body_crc = (int(part) for part in parts[2:])
    except ValueError:
        return None
    body = journal[end + 1 : end + 1 + body_length]
    if len(body) != body_length or zlib.crc32(body) != body_crc:
        return None
    return body, end + 1 + body_length, base_length, base_crc


class StepJournal:
    """One session's journal file, kept open between steps. Not thread-safe: the store's lock orders
    the calls."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.size = 0
        """Bytes of records since the last :meth:`restart` (what the store weighs against a checkpoint)."""
        self._fd: int | None = None
        self._allocated = 0
        """The file's length: records, then zeros."""

    def append(self, record: bytes) -> None:
        """Add ``record`` and make it durable before returning; raises ``OSError``."""
        fd = self._open()
        end = self.size + len(record)
        if end > self._allocated:
            grown = end + GROW_BYTES
            _write_at(fd, bytes(grown - self._allocated), self._allocated)
            self._allocated = grown  # made durable by the record's fdatasync below, with the size
        _write_at(fd, record, self.size)
        _datasync(fd)
        self.size = end

    def restart(self) -> None:
        """Start over after a full checkpoint (whose base no earlier record names). Best effort: a
        stale record left behind is never applied."""
        self.size = 0
        if self._fd is not None:
            try:
                os.ftruncate(self._fd, 0)
                self._allocated = 0
            except OSError as exc:
                logger.info("could not empty the step journal %s: %s", self.path.name, exc)

    def read(self) -> bytes | None:
        """The journal's bytes; None when there is none, or it cannot be read (the checkpoint alone is
        then the latest state there is)."""
        try:
            return self.path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            logger.warning("could not read the step journal %s: %s", self.path.name, exc)
            return None

    def discard(self) -> None:
        """Close and remove the file (the session is over, or its checkpoint gone)."""
        self.close()
        self.size = 0
        self.path.unlink(missing_ok=True)

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)

    def _open(self) -> int:
        if self._fd is None:
            existed = self.path.exists()
            self._fd = os.open(self.path, _OPEN, PRIVATE_FILE_MODE)
            self._allocated = os.fstat(self._fd).st_size
            if not existed:
                fsync_directory(self.path.parent)  # the new name must survive a power cut too
        return self._fd


def _write_at(fd: int, data: bytes, offset: int) -> None:
    os.lseek(fd, offset, os.SEEK_SET)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
