"""Envelopes to one service (audit or telemetry) off the agent loop's path: appended to the event spool
(:mod:`.spool`) as they happen, sent in batches in the background.

:meth:`EventOutbox.put` encodes the envelope, appends it to the open segment and returns — a few
microseconds, never a wait on the network. A segment is sealed when it holds a batch (500 envelopes or
about 900 KB, inside the services' limits of 500 and 1 MiB) or ``flush_after_s`` after its first
envelope; one background task sends the sealed segments oldest first, one request each, and removes
each once the service took it. Modelled on the upload queue (:mod:`agent_runtime.agent_host.uploads.
queue`):

* the service cannot be reached (the backend client's own retries spent): the waiting segments are
  fsynced and the outbox tries again after a growing backoff (full jitter,
  :meth:`~contracts.retry.RetryPolicy.delay`); new envelopes keep going to disk
  meanwhile (seed 000 §11: "Audit / Telemetry unreachable — silently retry, never blocks the loop");
* the service refuses one envelope (a 4xx naming ``[i]``): that envelope is dropped, logged, and the
  rest of its batch sent again; a batch refused as a whole is dropped and logged;
* bounded: in memory, segments past ``max_memory_bytes`` are kept on disk only (read back when their
  turn comes); on disk, an envelope that would take the spool past ``max_pending_bytes`` is dropped
  and counted (:attr:`EventOutbox.dropped`);
* what is unsent when the session ends stays in the spool; the next runtime of the same backend,
  tenant and user sends it first (:meth:`EventOutbox.start`). Services are idempotent on ``eventId``,
  so a segment sent twice — a process killed after the service stored it — is recorded once.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
import os
import random as random_module
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_runtime.agent_host.llm.config import RetrySettings
from agent_runtime.agent_host.services.errors import BackendRejected

from .spool import EventSpool, SegmentHeader, append

__all__ = [
    "BATCH_BYTES",
    "BATCH_EVENTS",
    "MAX_EVENT_BYTES",
    "Deliver",
    "EventOutbox",
]

logger = logging.getLogger(__name__)

BATCH_EVENTS = 500
"""The services take 1-500 envelopes per request."""
BATCH_BYTES = 900 * 1024
"""A request's body stays under the services' 1 MiB."""
MAX_EVENT_BYTES = 60 * 1024
"""One envelope: under the services' 64 KiB (counted in characters there, bytes here)."""
_RETRY = RetrySettings(max_retries=0, base_s=2.0, cap_s=60.0)
_INLINE_BYTES = 256 * 1024
"""Segments up to this size are read back on the event loop; larger ones on a worker thread."""
_INDEX = re.compile(r"^\[(\d+)\]")

Deliver = Callable[[list[bytes]], Awaitable[None]]
"""Sends one batch of encoded envelopes. Raises ``BackendRejected`` when the service refused it;
anything else it raises means the service could not take it now (the batch is sent again later)."""


@dataclass(slots=True)
class _Segment:
    path: Path | None
    """None: memory only (the spool could not be written)."""
    lines: list[bytes] | None
    """None: on disk only (adopted, or moved out of memory), read back when its turn comes."""
    size: int
    durable: bool = False
    on_disk: bool = True
    """Every line of it is in its file (False once a write failed: it must then stay in memory)."""


class EventOutbox:
    """One stream's envelopes for one session. Use in one event loop: :meth:`start`, :meth:`put` any
    number of times, :meth:`aclose` once."""

    def __init__(
        self,
        spool: EventSpool,
        header: SegmentHeader,
        deliver: Deliver,
        *,
        flush_after_s: float = 1.0,
        batch_events: int = BATCH_EVENTS,
        batch_bytes: int = BATCH_BYTES,
        max_pending_bytes: int = 64 * 1024 * 1024,
        max_memory_bytes: int = 4 * 1024 * 1024,
        retry: RetrySettings = _RETRY,
        random: Callable[[], float] = random_module.random,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._spool = spool
        self.header = header
        self._deliver = deliver
        self._flush_after_s = flush_after_s
        self._batch_events = batch_events
        self._batch_bytes = batch_bytes
        self._max_pending_bytes = max_pending_bytes
        self._max_memory_bytes = max_memory_bytes
        self._retry = retry
        self._random = random
        self._monotonic = monotonic
        self._sealed: collections.deque[_Segment] = collections.deque()
        self._current: _Segment | None = None
        self._current_fd: int | None = None
        self._current_since = 0.0
        self._pending_bytes = 0
        self._memory_bytes = 0
        self._wake = asyncio.Event()
        self._changed = asyncio.Event()
        self._retry_now = asyncio.Event()
        self._stalled = False
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self._disk_warned = False
        self._full_warned = False
        self.dropped = 0
        """Envelopes given up on: refused by the service, over the spool's bound, or not encodable."""
        self.sent = 0
        """Envelopes the service took (this session's and earlier runtimes' alike)."""

    # ------------------------------------------------------------------ reading

    @property
    def stream(self) -> str:
        return self.header.stream

    @property
    def pending_bytes(self) -> int:
        """Spooled bytes not sent yet (an earlier runtime's included)."""
        return self._pending_bytes

    @property
    def idle(self) -> bool:
        """Nothing waits to be sent."""
        return not self._sealed and self._current is None

    @property
    def stalled(self) -> bool:
        """The service could not be reached at the last attempt (the outbox waits to try again)."""
        return self._stalled

    # ------------------------------------------------------------------ using

    def start(self) -> None:
        """Take the segments earlier runtimes left for this backend and identity, and start sending."""
        if self._task is not None or self._closed:
            return
        try:
            leftovers = self._spool.adopt(self.stream, self.header)
        except OSError as exc:
            logger.warning("the %s events cannot be spooled: %s", self.stream, exc)
            leftovers = []
        for path in leftovers:
            try:
                size = path.stat().st_size
            except OSError:
                continue
            self._sealed.append(_Segment(path, None, size, durable=True))
            self._pending_bytes += size
        if leftovers:
            logger.info("sending %d %s segment(s) an earlier runtime left", len(leftovers), self.stream)
        self._task = asyncio.get_running_loop().create_task(self._drain(), name=f"{self.stream}-outbox")
        self._wake.set()

    def put(self, envelope: Mapping[str, Any]) -> bool:
        """Spool one envelope for sending; False when it was dropped (logged). Never raises."""
        try:
            line = json.dumps(envelope, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
        except (TypeError, ValueError) as exc:
            self.dropped += 1
            logger.error("dropped a %s envelope that is not JSON: %s", self.stream, exc)
            return False
        return self.put_encoded(line)

    def put_encoded(self, line: bytes) -> bool:
        """:meth:`put` for an envelope already encoded (one JSON object, no newline)."""
        if self._closed:
            return False
        size = len(line) + 1
        if size > MAX_EVENT_BYTES:
            self.dropped += 1
            logger.error(
                "dropped a %s envelope of %d bytes: larger than the service takes", self.stream, size
            )
            return False
        if self._pending_bytes + size > self._max_pending_bytes:
            self.dropped += 1
            if not self._full_warned:
                self._full_warned = True
                logger.warning(
                    "%d MB of %s events wait for their service; new ones are dropped until it takes them",
                    self._pending_bytes // 2**20,
                    self.stream,
                )
            return False
        segment = self._current
        if segment is None:
            segment = self._open_segment()
        assert segment.lines is not None
        if self._current_fd is not None:
            try:
                append(self._current_fd, line + b"\n")
            except OSError as exc:
                self._disk_failed(exc)
                segment.on_disk = False
        segment.lines.append(line)
        segment.size += size
        self._pending_bytes += size
        self._memory_bytes += size
        if len(segment.lines) >= self._batch_events or segment.size >= self._batch_bytes:
            self._seal()
        return True

    async def flush(self, timeout_s: float = 5.0) -> bool:
        """Send what is spooled now — at once, even while backing off from a service that could not be
        reached — waiting at most ``timeout_s``: whether everything was sent."""
        if self._current is not None:
            self._seal()
        self._retry_now.set()
        try:
            async with asyncio.timeout(timeout_s):
                while not self.idle and self._task is not None:
                    self._changed.clear()
                    await self._changed.wait()
        except TimeoutError:
            pass
        return self.idle

    async def aclose(self, *, flush_timeout_s: float = 1.0) -> None:
        """Send what can be sent within ``flush_timeout_s`` (nothing is tried while the service cannot
        be reached: the exit never waits on a service that is down), then stop; the rest stays spooled
        for the next runtime."""
        if self._closed:
            return
        if self._task is not None and not self._stalled and not self.idle:
            await self.flush(flush_timeout_s)
        self._closed = True
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._close_fd()

    # ------------------------------------------------------------------ inside

    def _open_segment(self) -> _Segment:
        path: Path | None = None
        try:
            path, self._current_fd = self._spool.new_segment(self.header)
        except OSError as exc:
            self._disk_failed(exc)
        segment = _Segment(path, [], 0, on_disk=path is not None)
        self._current = segment
        self._current_since = self._monotonic()
        self._wake.set()  # the drain task starts the segment's flush timer
        return segment

    def _seal(self) -> None:
        segment = self._current
        if segment is None:
            return
        self._close_fd()
        self._current = None
        if not segment.lines:
            if segment.path is not None:
                self._spool.remove(segment.path)
            return
        if self._memory_bytes > self._max_memory_bytes and segment.on_disk and segment.path is not None:
            # Read back from disk when its turn comes: memory holds the segments that go first.
            self._memory_bytes -= segment.size
            segment.lines = None
        self._sealed.append(segment)
        self._wake.set()

    def _close_fd(self) -> None:
        fd, self._current_fd = self._current_fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)

    def _disk_failed(self, exc: OSError) -> None:
        self._close_fd()
        if not self._disk_warned:
            self._disk_warned = True
            logger.warning(
                "the %s events cannot be spooled (%s): they are kept in memory only", self.stream, exc
            )

    def _changed_now(self) -> None:
        self._changed.set()

    async def _drain(self) -> None:
        failures = 0
        while True:
            if not self._sealed:
                self._changed_now()
                if self._current is not None and self._current.lines:
                    left = self._current_since + self._flush_after_s - self._monotonic()
                    if left > 0:
                        self._wake.clear()
                        with contextlib.suppress(TimeoutError):
                            async with asyncio.timeout(left):
                                await self._wake.wait()
                        continue
                    self._seal()
                    continue
                self._wake.clear()
                await self._wake.wait()
                continue
            segment = self._sealed[0]
            lines = await self._lines_of(segment)
            sent = await self._send(lines) if lines else True
            if not sent:
                failures += 1
                self._stalled = True
                self._changed_now()
                await self._make_durable()
                self._retry_now.clear()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self._retry.delay(failures, self._random)):
                        await self._retry_now.wait()
                continue
            if failures:
                logger.info("the %s service takes events again", self.stream)
            failures = 0
            self._stalled = False
            self._full_warned = False
            self._sealed.popleft()
            self._pending_bytes -= segment.size
            if segment.lines is not None:
                self._memory_bytes -= segment.size
            if segment.path is not None:
                self._spool.remove(segment.path)
            self._changed_now()

    async def _lines_of(self, segment: _Segment) -> list[bytes] | None:
        if segment.lines is not None:
            return segment.lines
        assert segment.path is not None
        if segment.size <= _INLINE_BYTES:
            lines = self._spool.read(segment.path)
        else:
            lines = await asyncio.to_thread(self._spool.read, segment.path)
        return lines

    async def _send(self, lines: list[bytes]) -> bool:
        """Send ``lines`` in batches the service takes: True once every one was taken or dropped as
        refused, False when the service could not be reached (to be sent again later)."""
        start = 0
        while start < len(lines):
            end, size = start, 2
            while (
                end < len(lines)
                and end - start < self._batch_events
                and size + len(lines[end]) + 1 <= self._batch_bytes
            ):
                size += len(lines[end]) + 1
                end += 1
            end = max(end, start + 1)
            batch = lines[start:end]
            while batch:
                try:
                    await self._deliver(batch)
                except BackendRejected as exc:
                    batch = self._refused(batch, exc)
                    continue
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # a boundary: nothing the client raises may end the outbox
                    logger.info(
                        "the %s service could not take %d event(s) now: %s", self.stream, len(batch), exc
                    )
                    del lines[:start]  # what was taken is not sent again
                    return False
                self.sent += len(batch)
                break
            start = end
        return True

    def _refused(self, batch: list[bytes], exc: BackendRejected) -> list[bytes]:
        """What is left of ``batch`` to send after the service refused it."""
        shape = exc.shape
        found = _INDEX.match(str(shape.details.get("field", "")))
        if found is not None and int(found.group(1)) < len(batch):
            index = int(found.group(1))
            self.dropped += 1
            logger.error(
                "the %s service refused an event (%s: %s); it is dropped: %s",
                self.stream,
                shape.code.value,
                shape.message,
                batch[index][:300].decode("utf-8", "replace"),
            )
            return batch[:index] + batch[index + 1 :]
        self.dropped += len(batch)
        logger.error(
            "the %s service refused a batch of %d event(s) (%s: %s); it is dropped",
            self.stream,
            len(batch),
            shape.code.value,
            shape.message,
        )
        return []

    async def _make_durable(self) -> None:
        """fsync what waits (a power cut must not lose it either), each segment once."""
        waiting = [s.path for s in self._sealed if not s.durable and s.path is not None]
        for segment in self._sealed:
            segment.durable = True
        current = self._current
        if current is not None and current.path is not None:
            waiting.append(current.path)  # synced again each round while it fills: it is small
        if waiting:
            await asyncio.to_thread(self._sync_all, waiting)

    def _sync_all(self, paths: list[Path]) -> None:
        for path in paths:
            self._spool.sync(path)
