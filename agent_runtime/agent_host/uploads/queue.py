"""Uploads to the Workspace Service off the agent loop's path: spooled, then sent in the background.

Seed 000 §7.5 uploads a step's artifacts before its result joins the thread, and §4.1 the session
history when a task ends; each upload is an HTTP round trip the step (or the task's end) waited for —
about 2 ms of every WriteFile step against a local backend, far more against a remote one. Here
:meth:`UploadQueue.put` writes the upload to the spool (:mod:`.spool`) and returns; one background
task sends the spooled entries in the order they were put, removes each once the service took it,
and keeps the rest for later:

* an entry the service refuses (4xx) is dropped and reported (``on_failed``): sending it again would
  be refused again;
* when the service cannot be reached (the backend client's own retries spent), the waiting entries
  are fsynced (a power cut must not lose what now waits), and the queue tries again after a backoff
  that grows (full jitter, :meth:`~contracts.retry.RetryPolicy.delay`) — new entries
  wait behind it;
* what is still spooled when the session ends stays on disk; the next runtime with the same backend
  sends it (oldest first, read in a thread once the queue may send: not on the session's start),
  before its own. Every entry carries an
  ``Idempotency-Key``, so an entry sent twice — a process killed after the service stored it, or two
  runtimes starting at once — is stored once; and the service keeps the newest ``session_history``
  whatever order histories arrive in.

A step's work comes first: :meth:`UploadQueue.hold` (the model's answer arrived) keeps the queue from
sending until :meth:`UploadQueue.release` — called when the task ends, and :data:`MODEL_WAIT_S` into
each wait for the model — or :data:`HOLD_S` at most. Sending costs the runtime's loop about 1 ms of
work (the request built and written, its answer read) and the service as much on the other core:
measured against a zero-latency model, an upload sent as soon as it was put added about 1 ms to the
WriteFile step that made it, and as much when it was sent just after the next model request had been
started (that request is written a few loop turns later). A real model takes far longer than 10 ms
to answer, so there every upload goes while the loop has nothing else to do; against one that
answers at once they go between tasks (and one every :data:`HOLD_S` while steps follow each other).

Artifacts are written without fsync (a crash of the runtime does not lose them; a power cut in the
milliseconds before they are sent may, and §7.5 makes artifacts best effort anyway); a history is
put ``durable``. :meth:`UploadQueue.settle` lets the loop hold a task's terminal event until the
task's history (and so every artifact put before it) reached the service, as long as the service is
reachable: the seed's "persisted, then announced" order, without ever waiting on a service that is
down.
"""

from __future__ import annotations

import asyncio
import base64
import collections
import contextlib
import logging
import random as random_module
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError

from agent_runtime.agent_host.llm.config import RetrySettings
from agent_runtime.agent_host.services.errors import BackendRejected
from contracts.enums import ArtifactType
from contracts.errors import CoworkError
from contracts.rest.workspaces import ArtifactUploadRequest, ArtifactUploadResponse
from contracts.validation import invalid_request

from .admission import UploadIntent
from .spool import SpooledUpload, UploadSpool

__all__ = ["HOLD_S", "MAX_PENDING_BYTES", "MODEL_WAIT_S", "SENT", "UploadQueue", "Uploader"]

logger = logging.getLogger(__name__)

SENT = "sent"
"""What a settled ticket holds when its upload reached the service (otherwise: why it was dropped)."""

MAX_PENDING_BYTES = 256 * 1024 * 1024
"""Artifacts waiting beyond this are dropped (and reported) rather than fill the disk while the
service is down; histories are always kept."""
MAX_AGE_S = 7 * 24 * 3600.0
"""A spooled entry older than this is given up on at start (the workspace it was for may be gone)."""
SETTLE_TIMEOUT_S = 30.0
"""The longest :meth:`UploadQueue.settle` waits for a service that answers slowly (the backend client's
read timeout): a task's end is not held longer."""
HOLD_S = 0.1
"""The longest :meth:`UploadQueue.hold` keeps uploads back: a step that takes longer (a long command,
an approval) is waiting itself, and a missed :meth:`UploadQueue.release` costs no more than this."""
MODEL_WAIT_S = 0.01
"""How long the loop has waited for the model before uploads go (module docstring)."""
_INLINE_BYTES = 256 * 1024
"""Entries up to this size are written and read on the event loop; larger ones on a worker thread."""
_RETRY = RetrySettings(max_retries=0, base_s=2.0, cap_s=60.0)


class Uploader(Protocol):
    """Where entries go: ``services.BackendClient`` is one."""

    async def upload_artifact(
        self, request: ArtifactUploadRequest, *, idempotency_key: str | None = None
    ) -> ArtifactUploadResponse: ...


@dataclass(slots=True)
class _Entry:
    path: Path
    name: str
    size: int
    durable: bool
    ticket: asyncio.Future[str]


class UploadQueue:
    """One session's uploads (and the spool's leftovers for the same backend). Use in one event loop:
    :meth:`start`, :meth:`put` any number of times, :meth:`aclose` once."""

    def __init__(
        self,
        spool: UploadSpool,
        uploader: Uploader,
        *,
        origin: str,
        on_failed: Callable[[str, str], None] | None = None,
        admit: Callable[[UploadIntent], str | None] | None = None,
        max_pending_bytes: int = MAX_PENDING_BYTES,
        hold_s: float = HOLD_S,
        retry: RetrySettings = _RETRY,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        random: Callable[[], float] = random_module.random,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._spool = spool
        self._uploader = uploader
        self.origin = origin.rstrip("/")
        self._on_failed = on_failed
        self._admit = admit
        self._max_pending_bytes = max_pending_bytes
        self._hold_s = hold_s
        self._retry = retry
        self._sleep = sleep
        self._random = random
        self._clock = clock
        self._entries: collections.deque[_Entry] = collections.deque()
        self._pending_bytes = 0
        self._wake = asyncio.Event()
        self._stalled = asyncio.Event()
        self._released = asyncio.Event()
        self._released.set()
        self._release_timer: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[None] | None = None
        self._closed = False

    @property
    def pending(self) -> int:
        """Entries not yet sent (this session's and the leftovers being sent)."""
        return len(self._entries)

    @property
    def stalled(self) -> bool:
        """The service could not be reached at the last attempt (the queue is waiting to try again)."""
        return self._stalled.is_set()

    def start(self) -> None:
        """Start sending. The spool's leftovers for this backend are read by the sending task, in a
        thread, once it may send (not on the session's start), and go first, oldest first."""
        if self._task is not None or self._closed:
            return
        self._task = asyncio.get_running_loop().create_task(self._drain(), name="upload-queue")

    def hold(self) -> None:
        """The agent loop works on a step: keep what is put from being sent until :meth:`release`, or
        ``hold_s`` (:data:`HOLD_S`) at most (an upload already on its way goes on)."""
        self._cancel_release()
        self._released.clear()

    def release(self, *, after_s: float = 0.0) -> None:
        """The agent loop waits (for the model, or the task's end): send what waits — ``after_s``
        from now, unless :meth:`hold` comes first."""
        self._cancel_release()
        if after_s > 0:
            self._release_timer = asyncio.get_running_loop().call_later(after_s, self._released.set)
        else:
            self._released.set()

    def _cancel_release(self) -> None:
        if self._release_timer is not None:
            self._release_timer.cancel()
            self._release_timer = None

    async def put(
        self,
        *,
        workspace_id: str,
        session_id: str,
        task_id: str | None,
        step_id: str | None,
        artifact_type: ArtifactType,
        artifact_name: str,
        content_type: str,
        content: bytes,
        durable: bool = False,
    ) -> asyncio.Future[str]:
        """Spool one upload and return at once; the ticket settles with :data:`SENT` or why the upload
        was dropped. Never raises (a spool that cannot be written is reported like a refused upload).
        An upload ``admit`` refuses (the policy, :mod:`.admission`, which reports it) settles at once
        with its reason and is never spooled."""
        ticket: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        if self._closed:
            ticket.set_result("the session has ended")
            return ticket
        if self._admit is not None:
            refusal = self._admit(UploadIntent(artifact_type, artifact_name, len(content), task_id, step_id))
            if refusal is not None:
                ticket.set_result(refusal)
                return ticket
        if not durable and self._pending_bytes + len(content) > self._max_pending_bytes:
            reason = (
                f"{self._pending_bytes / 2**20:,.0f} MB of uploads already wait for the Workspace Service"
            )
            return self._dropped(ticket, artifact_name, reason)
        upload = SpooledUpload(
            origin=self.origin,
            idempotency_key=uuid.uuid4().hex,
            workspace_id=workspace_id,
            session_id=session_id,
            task_id=task_id,
            step_id=step_id,
            artifact_type=artifact_type,
            artifact_name=artifact_name,
            content_type=content_type,
            content=content,
        )
        try:
            if len(content) <= _INLINE_BYTES:
                path = self._spool.put(upload, durable=durable)
            else:
                path = await asyncio.to_thread(self._spool.put, upload, durable=durable)
        except OSError as exc:
            logger.warning("could not spool the upload of %s: %s", artifact_name, exc)
            return self._dropped(ticket, artifact_name, f"it could not be spooled ({exc.strerror or exc})")
        self._push(_Entry(path, artifact_name, len(content), durable, ticket))
        return ticket

    async def settle(self, ticket: asyncio.Future[str], *, timeout_s: float = SETTLE_TIMEOUT_S) -> str | None:
        """Wait for ``ticket`` while the service is reachable, ``timeout_s`` at most: its outcome, or
        None once the queue could not reach the service or the time is up (the upload stays spooled and
        is sent later)."""
        if ticket.done():
            return ticket.result()
        if self._stalled.is_set() or self._task is None:
            return None
        stalled = asyncio.ensure_future(self._stalled.wait())
        either: list[asyncio.Future[Any]] = [ticket, stalled]
        try:
            await asyncio.wait(either, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stalled.cancel()
        return ticket.result() if ticket.done() else None

    async def aclose(self) -> None:
        """Stop sending; whatever is not sent yet stays in the spool for the next runtime."""
        self._closed = True
        self._cancel_release()
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for entry in self._entries:
            if not entry.ticket.done():
                entry.ticket.set_result("the session ended before it was sent; it is kept for later")
        self._entries.clear()

    # ------------------------------------------------------------------ inside

    async def _take_leftovers(self) -> None:
        """Queue, ahead of this session's own entries, what earlier runtimes left for this backend."""
        found = await asyncio.to_thread(self._leftovers, {entry.path for entry in self._entries})
        queued = {entry.path for entry in self._entries}  # what was put while the thread read
        loop = asyncio.get_running_loop()
        entries = [
            _Entry(path, name, size, True, loop.create_future())
            for path, name, size in found
            if path not in queued
        ]
        self._entries.extendleft(reversed(entries))
        self._pending_bytes += sum(entry.size for entry in entries)

    def _leftovers(self, own: set[Path]) -> list[tuple[Path, str, int]]:
        """The spool's entries for this backend not put by this session (oldest first), as (path,
        name, size); an entry older than :data:`MAX_AGE_S` is given up and removed. Blocking I/O."""
        found = []
        for path in self._spool.entries():
            if path in own:
                continue
            upload = self._spool.read(path)
            if upload is None or upload.origin.rstrip("/") != self.origin:
                continue
            try:
                made_ns = int(path.name.split("-", 1)[0])
            except ValueError:
                made_ns = 0
            if self._clock() - made_ns / 1e9 > MAX_AGE_S:
                logger.warning("giving up on %s, spooled more than a week ago", upload.artifact_name)
                self._spool.remove(path)
                continue
            found.append((path, upload.artifact_name, len(upload.content)))
        return found

    def _push(self, entry: _Entry) -> None:
        self._entries.append(entry)
        self._pending_bytes += entry.size
        self._wake.set()

    def _dropped(self, ticket: asyncio.Future[str], name: str, reason: str) -> asyncio.Future[str]:
        ticket.set_result(reason)
        self._report(name, reason)
        return ticket

    def _report(self, name: str, reason: str) -> None:
        if self._on_failed is None:
            return
        try:
            self._on_failed(name, reason)
        except Exception:
            logger.exception("the upload-failure callback failed for %s", name)

    async def _drain(self) -> None:
        await self._may_send()
        await self._take_leftovers()
        failures = 0
        while True:
            if not self._entries:
                self._wake.clear()
                await self._wake.wait()
                continue
            await self._may_send()
            entry = self._entries[0]
            outcome = await self._send(entry)
            if outcome is None:  # the service cannot be reached: keep it, wait, try again
                failures += 1
                if failures == 1:
                    await self._make_durable()
                self._stalled.set()
                await self._sleep(self._retry.delay(failures, self._random))
                continue
            failures = 0
            self._stalled.clear()
            self._entries.popleft()
            self._pending_bytes -= entry.size
            if outcome != SENT:
                self._report(entry.name, outcome)
            self._spool.remove(entry.path)
            if not entry.ticket.done():
                entry.ticket.set_result(outcome)

    async def _may_send(self) -> None:
        """Wait for :meth:`release`, or ``hold_s`` at most."""
        if not self._released.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._released.wait(), self._hold_s)

    async def _send(self, entry: _Entry) -> str | None:
        """:data:`SENT`, why the entry was dropped, or None when it should be sent again later."""
        if entry.size <= _INLINE_BYTES:
            upload = self._spool.read(entry.path)
        else:
            upload = await asyncio.to_thread(self._spool.read, entry.path)
        if upload is None:
            return SENT  # another runtime sent it meanwhile, or it was unreadable (logged, removed)
        try:
            request = ArtifactUploadRequest(
                workspace_id=upload.workspace_id,
                session_id=upload.session_id,
                task_id=upload.task_id,
                step_id=upload.step_id,
                artifact_type=upload.artifact_type,
                artifact_name=upload.artifact_name,
                content_type=upload.content_type,
                content_base64=base64.b64encode(upload.content).decode("ascii"),
            )
        except ValidationError as exc:
            return f"it cannot be described to the Workspace Service: {invalid_request(exc).message}"
        try:
            await self._uploader.upload_artifact(request, idempotency_key=upload.idempotency_key)
        except CoworkError as exc:
            if _refused(exc):
                return f"{exc.shape.code.value}: {exc.shape.message}"
            logger.info("the Workspace Service could not take %s now: %s", upload.artifact_name, exc)
            return None
        except Exception:
            # A boundary: whatever the client raises must not end the queue.
            logger.exception("uploading %s failed unexpectedly", upload.artifact_name)
            return None
        return SENT

    async def _make_durable(self) -> None:
        waiting = [entry.path for entry in self._entries if not entry.durable]
        for entry in self._entries:
            entry.durable = True
        if waiting:
            await asyncio.to_thread(self._make_all_durable, waiting)

    def _make_all_durable(self, paths: list[Path]) -> None:
        for path in paths:
            self._spool.make_durable(path)


def _refused(exc: CoworkError) -> bool:
    """The service answered and said no (a 4xx): sending the same upload again cannot help."""
    return isinstance(exc, BackendRejected)
