"""The session's event emitter: ``SessionEvent`` notifications to the desktop and the local event log
(seed 000 §12; envelope fields per seed 001 §6.1 and §6.3).

``emit`` is called from the agent loop for every text chunk, so it only builds and checks the event
and queues it; two background tasks deliver. Each sink has its own queue so a desktop that stops
reading (``notify`` waits on backpressure) never holds up the log, and a full disk never holds up the
desktop. Order of delivery on each sink is the order of ``emit``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agent_runtime.agent_host.events.log_file import EventLogFile
from contracts._base import WireModel
from contracts.enums import Component
from contracts.events import EventType, check_payload
from contracts.validation import FieldProblem

__all__ = [
    "CLOSE_TIMEOUT_S",
    "MAX_PENDING_NOTIFICATIONS",
    "NOTIFICATION_METHOD",
    "Clock",
    "EventEmitter",
    "Notify",
    "utc_now",
    "wire_timestamp",
]

logger = logging.getLogger(__name__)

Notify = Callable[[str, Any], Awaitable[None]]
"""``RpcConnection.notify(method, params)``: may wait (backpressure), may raise (peer gone)."""
Clock = Callable[[], datetime]

NOTIFICATION_METHOD = "SessionEvent"
CLOSE_TIMEOUT_S = 2.0
# A desktop that stops reading for this many events has stopped for good; past it the oldest
# undelivered events are dropped (the local log still has them) rather than memory growing without end.
MAX_PENDING_NOTIFICATIONS = 10_000
COMPONENT = Component.LOCAL_AGENT_HOST.value


def utc_now() -> datetime:
    return datetime.now(UTC)


def wire_timestamp(moment: datetime) -> str:
    """ISO 8601 in UTC with a ``Z``, as the seeds write it (``2026-02-21T15:09:00Z``)."""
    utc = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return utc.isoformat().replace("+00:00", "Z")


class EventEmitter:
    """Fire-and-forget ``SessionEvent``s carrying the full ID chain, to the desktop and a JSONL log.

    ``notify`` is the desktop sink (None while no desktop is connected; :meth:`attach` changes it);
    ``log_path`` the session's event log (None: no log). Must be used inside one running event loop.
    """

    def __init__(
        self,
        *,
        workspace_id: str,
        session_id: str,
        notify: Notify | None,
        log_path: Path | None,
        clock: Clock = utc_now,
    ) -> None:
        if not workspace_id or not session_id:
            raise ValueError("an event emitter needs a workspace ID and a session ID")
        self.workspace_id = workspace_id
        self.session_id = session_id
        self._notify = notify
        self._log = EventLogFile(log_path) if log_path is not None else None
        self._clock = clock
        self._closed = False
        self._sequence = 0
        self._log_queue: deque[tuple[int, dict[str, Any]]] = deque()
        self._notify_queue: deque[tuple[int, dict[str, Any]]] = deque()
        self._log_done = 0
        self._notify_done = 0
        self._log_wake = asyncio.Event()
        self._notify_wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._invalid_types: set[str] = set()
        self._notify_failing = False
        self._overflowing = False
        self.dropped_invalid = 0
        self.dropped_undelivered = 0
        self.notify_failures = 0
        self.observer: Callable[[dict[str, Any]], None] | None = None
        """Called with each event as it is emitted, in the loop's own call (the audit and telemetry
        producer, :mod:`agent_runtime.agent_host.observability`): it must be quick, must not change
        the event, and must not raise."""

    @property
    def log_path(self) -> Path | None:
        return self._log.path if self._log is not None else None

    @property
    def emitted(self) -> int:
        """Events accepted so far (built, checked and queued)."""
        return self._sequence

    @property
    def closed(self) -> bool:
        return self._closed

    def attach(self, notify: Notify | None) -> None:
        """(Re)connect the desktop sink; events not yet delivered go to the new one."""
        self._notify = notify
        self._notify_failing = False

    def emit(
        self,
        event_type: EventType,
        payload: Mapping[str, Any] | WireModel | None = None,
        *,
        task_id: str | None = None,
        step_id: str | None = None,
    ) -> None:
        """Queue one event; never blocks, never raises.

        A payload that does not fit its type's model is a bug in the caller: it is logged at error
        level and the event dropped, so a typo can never stop the agent loop.
        """
        if self._closed:
            logger.debug("event emitter closed; dropped a %s event", event_type)
            return
        try:
            event = self._build(event_type, payload, task_id, step_id)
            self._start()
        except Exception as exc:
            self._report_invalid(event_type, exc)
            return
        self._sequence += 1
        item = (self._sequence, event)
        if self._log is None:
            self._log_done = self._sequence
        else:
            self._log_queue.append(item)
            self._log_wake.set()
        if len(self._notify_queue) >= MAX_PENDING_NOTIFICATIONS:
            self._notify_queue.popleft()
            self.dropped_undelivered += 1
            if not self._overflowing:
                self._overflowing = True
                logger.warning(
                    "the desktop is not reading events; dropping the oldest undelivered ones "
                    "(the event log keeps them)"
                )
        self._notify_queue.append(item)
        self._notify_wake.set()
        if self.observer is not None:
            try:
                self.observer(event)
            except Exception:
                logger.exception("the event observer failed on a %s event", event_type)

    def log_only(self, event_type: EventType, encoded_payload: bytes, *, task_id: str | None = None) -> None:
        """Append one event to the local log only, its payload already JSON (``encoded_payload``, a
        JSON object): the session runtime's ``conversation_snapshot`` (seed 002), which is as large as
        the checkpoint it repeats and is never sent to the desktop. Kept in order with ``emit``."""
        if self._closed or self._log is None:
            return
        try:
            event = self._build(event_type, None, task_id, None)
            self._start()
        except Exception as exc:
            self._report_invalid(event_type, exc)
            return
        event["payload"] = _Encoded(encoded_payload)
        self._sequence += 1
        self._log_queue.append((self._sequence, event))
        self._log_wake.set()
        # Through the desktop's queue too, so "delivered" keeps its order; it is skipped there.
        self._notify_queue.append((self._sequence, event))
        self._notify_wake.set()

    async def drain(self) -> None:
        """Return once every event emitted so far was delivered (or given up on) and logged."""
        target = self._sequence
        if self._settled(target):
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append((target, future))
        await future

    async def aclose(self) -> None:
        """Stop accepting events, deliver what is queued within ``CLOSE_TIMEOUT_S``, then stop."""
        if self._closed and not self._tasks:
            return
        self._closed = True
        try:
            async with asyncio.timeout(CLOSE_TIMEOUT_S):
                await self.drain()
        except TimeoutError:
            logger.warning(
                "gave up delivering %d event(s) to the desktop at shutdown", len(self._notify_queue)
            )
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._write_log_batch()  # whatever the log task had not reached; the log loses nothing
        if self._log is not None:
            self._log.close()
        self._notify_queue.clear()
        self._log_done = self._notify_done = self._sequence
        self._wake_waiters()

    # ------------------------------------------------------------------ building

    def _build(
        self,
        event_type: EventType | str,
        payload: Mapping[str, Any] | WireModel | None,
        task_id: str | None,
        step_id: str | None,
    ) -> dict[str, Any]:
        kind = EventType(event_type)
        if payload is None:
            raw: dict[str, Any] = {}
        elif isinstance(payload, WireModel):
            raw = payload.to_wire()
        else:
            raw = dict(payload)
        event: dict[str, Any] = {
            "eventId": f"evt_{uuid.uuid4().hex}",
            "eventType": kind.value,
            "timestamp": wire_timestamp(self._clock()),
            "workspaceId": self.workspace_id,
            "sessionId": self.session_id,
        }
        for key, value in (("taskId", task_id), ("stepId", step_id)):
            if value is not None:
                if not isinstance(value, str) or not value:
                    raise FieldProblem(key, "must be a non-empty string")
                event[key] = value
        event["payload"] = check_payload(kind, raw)
        return event

    def _report_invalid(self, event_type: object, exc: Exception) -> None:
        self.dropped_invalid += 1
        name = str(event_type)
        problem = f"{exc.field} {exc.problem}" if isinstance(exc, FieldProblem) else repr(exc)
        # First time per type at error level (it is a bug); a loop repeating it must not flood the log.
        level = logging.DEBUG if name in self._invalid_types else logging.ERROR
        self._invalid_types.add(name)
        logger.log(level, "dropped a %s event that does not fit its contract: %s", name, problem)

    # ------------------------------------------------------------------ delivery

    def _start(self) -> None:
        if self._tasks:
            return
        loop = asyncio.get_running_loop()  # RuntimeError outside a loop: emit reports and drops
        self._tasks = [
            loop.create_task(self._run_log(), name=f"event-log:{self.session_id}"),
            loop.create_task(self._run_notify(), name=f"event-notify:{self.session_id}"),
        ]

    async def _run_log(self) -> None:
        while True:
            await self._log_wake.wait()
            self._log_wake.clear()
            self._write_log_batch()

    def _write_log_batch(self) -> None:
        # Synchronous on purpose: an append to the page cache takes microseconds, less than handing
        # the batch to a worker thread would.
        if self._log is None or not self._log_queue:
            return
        batch = list(self._log_queue)
        self._log_queue.clear()
        lines: list[bytes] = []
        for _, event in batch:
            try:
                lines.append(_log_line(event))
            except (TypeError, ValueError):
                logger.exception("could not encode a %s event for the log", event.get("eventType"))
        if lines:
            self._log.write_lines(lines)
        self._log_done = batch[-1][0]
        self._wake_waiters()

    async def _run_notify(self) -> None:
        while True:
            if not self._notify_queue:
                self._overflowing = False
                self._notify_wake.clear()
                await self._notify_wake.wait()
                continue
            sequence, event = self._notify_queue.popleft()
            notify = self._notify
            if notify is not None and not isinstance(event.get("payload"), _Encoded):
                await self._deliver(notify, event)
            self._notify_done = sequence
            self._wake_waiters()

    async def _deliver(self, notify: Notify, event: dict[str, Any]) -> None:
        try:
            await notify(NOTIFICATION_METHOD, event)
        except asyncio.CancelledError as exc:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # aclose is stopping us
            self._notify_failed(exc)  # the sink's own cancellation: a failed delivery, not ours to end
        except Exception as exc:
            self._notify_failed(exc)
        else:
            self._notify_failing = False

    def _notify_failed(self, exc: BaseException) -> None:
        # The desktop is gone or broke the connection; the loop and the log carry on regardless.
        self.notify_failures += 1
        if not self._notify_failing:
            self._notify_failing = True
            logger.warning("could not deliver events to the desktop: %r", exc)

    def _settled(self, target: int) -> bool:
        return self._log_done >= target and self._notify_done >= target

    def _wake_waiters(self) -> None:
        if not self._waiters:
            return
        waiting: list[tuple[int, asyncio.Future[None]]] = []
        for target, future in self._waiters:
            if future.done():
                continue
            if self._settled(target):
                future.set_result(None)
            else:
                waiting.append((target, future))
        self._waiters = waiting


class _Encoded(bytes):
    """A payload that is JSON already (:meth:`EventEmitter.log_only`)."""


def _log_line(event: dict[str, Any]) -> bytes:
    payload = event.get("payload")
    if isinstance(payload, _Encoded):
        record = {key: value for key, value in event.items() if key != "payload"} | {"component": COMPONENT}
        head = json.dumps(record, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()
        return head[:-1] + b',"payload":' + bytes(payload) + b"}\n"
    record = {**event, "component": COMPONENT}
    return json.dumps(record, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode() + b"\n"
