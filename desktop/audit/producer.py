"""The desktop's audit producer: what only the desktop sees, to ``POST /audit/events`` (seed 001 §6.3,
Phase 3). Qt-free.

* **Approvals** — a request put in front of the user (``approval_shown``), the user's answer
  (``approval_resolved``, with the time the user took) and a request whose time ran out while shown
  (``approval_timeout``), from the Local Approval UI. The runtime records its own side (the request,
  the decision it received, its timeout): together they show what the user was asked and saw.
* **Runtime updates** — a runtime installed (``update_installed``) or taken out of service
  (``update_rolled_back``: revoked by its publisher, or crashing at start), from the desktop app.

Every envelope names a session: the session's ``featureFlags`` decide (``auditService``, see
:mod:`contracts.observability`), and its IDs are the envelope's chain. An update belongs to no session:
it is held (a few at most) until one with ``auditService`` on is open, and named with that one — the
first to run on the runtime the update installed.

The methods are called on the window's thread and only build the envelope and queue it (a bounded
deque: past :data:`MAX_QUEUED` the newest are dropped and counted). One worker thread sends the queue in
batches with its own HTTP client, so neither the network nor JSON encoding ever runs on the Qt thread;
while the backend cannot be reached it waits with a growing, jittered backoff and keeps the queue. The
queue lives in memory: what is unsent when the app quits is lost (the desktop's events are few; the
runtime's, which are many and the heart of the trail, are spooled on disk).
"""

from __future__ import annotations

import collections
import json
import logging
import random as random_module
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import httpx

from contracts.enums import BoundedContext, Component, Severity
from contracts.events import EventType
from contracts.observability import FeatureFlag, flag_enabled
from contracts.retry import RetryPolicy
from desktop.updater.outcome import UpdateResult, UpdateStatus

__all__ = ["MAX_QUEUED", "DesktopAudit", "SessionRef"]

logger = logging.getLogger(__name__)

MAX_QUEUED = 1_000
MAX_HELD_UPDATES = 16
BATCH = 100
_INDEX = re.compile(r"^\[(\d+)\]")
_LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})


@dataclass(frozen=True)
class SessionRef:
    """What the producer needs of an open conversation's session."""

    session_id: str
    workspace_id: str
    feature_flags: Mapping[str, bool] = field(default_factory=dict)

    @property
    def audited(self) -> bool:
        return flag_enabled(self.feature_flags, FeatureFlag.AUDIT_SERVICE)


@dataclass(frozen=True)
class _Access:
    url: str
    token: str
    tenant_id: str
    user_id: str


class DesktopAudit:
    """See the module docstring. ``sessions`` lists the open sessions (called on the window's thread);
    :meth:`connect` names the backend once it is known; :meth:`close` stops the worker."""

    def __init__(
        self,
        *,
        sessions: Callable[[], Iterable[SessionRef]] = lambda: (),
        monotonic: Callable[[], float] = time.monotonic,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        transport: httpx.BaseTransport | None = None,
        base_delay_s: float = 1.0,
        max_delay_s: float = 60.0,
        flush_after_s: float = 0.5,
    ) -> None:
        self.sessions = sessions
        self._monotonic = monotonic
        self._clock = clock
        self._transport = transport
        self._base_delay_s = base_delay_s
        self._max_delay_s = max_delay_s
        self._flush_after_s = flush_after_s
        self._access: _Access | None = None
        self._queue: collections.deque[dict[str, Any]] = collections.deque()
        self._held: list[tuple[EventType, dict[str, Any]]] = []
        self._shown: dict[str, float] = {}
        self._lock = threading.Condition()
        self._stopping = False
        self._worker: threading.Thread | None = None
        self._in_flight = 0
        self.dropped = 0
        self.sent = 0

    # ------------------------------------------------------------------ wiring

    def connect(self, url: str, token: str, tenant_id: str, user_id: str) -> None:
        """The backend (``BackendAccess``'s fields): sending starts."""
        with self._lock:
            self._access = _Access(url.rstrip("/"), token, tenant_id, user_id)
            self._lock.notify_all()
        self._start()

    def pump(self) -> None:
        """Attach held update events to a session, if one with audit on is open now."""
        if not self._held:
            return
        session = next((s for s in self.sessions() if s.audited), None)
        if session is None:
            return
        held, self._held = self._held, []
        for event_type, payload in held:
            self._put(session, event_type, payload, Component.DESKTOP_APP, BoundedContext.OPERATIONS)

    # ------------------------------------------------------------------ approvals (Local Approval UI)

    def approval_shown(self, session_id: str, request: Mapping[str, Any]) -> None:
        approval_id = request.get("approvalId")
        if not isinstance(approval_id, str) or not approval_id:
            return
        self._shown[approval_id] = self._monotonic()
        payload: dict[str, Any] = {"approvalId": approval_id}
        risk = request.get("riskLevel")
        if risk in ("low", "medium", "high"):
            payload["riskLevel"] = risk
        title = request.get("title")
        if isinstance(title, str) and title:
            payload["title"] = title[:500]
        self._approval(session_id, EventType.APPROVAL_SHOWN, payload, request)

    def approval_decided(
        self, session_id: str, approval_id: str, decision: str, scope: str = "once", reason: str = ""
    ) -> None:
        """The user's answer (the dialog's ``decided`` signal: its reason is not recorded here — the
        runtime's ``approval_resolved`` and the Approval Service keep it)."""
        if decision not in ("approved", "denied"):
            return
        shown = self._shown.pop(approval_id, None)
        latency = 0 if shown is None else max(0, int((self._monotonic() - shown) * 1000))
        payload = {
            "approvalId": approval_id,
            "decision": decision,
            "latencyMs": latency,
            "scope": scope if scope in ("once", "session") else "once",
        }
        self._approval(session_id, EventType.APPROVAL_RESOLVED, payload, None)

    def approval_timed_out(self, session_id: str, approval_id: str) -> None:
        """Shown, unanswered, and its time ran out (the runtime has denied it)."""
        self._shown.pop(approval_id, None)
        self._approval(session_id, EventType.APPROVAL_TIMEOUT, {"approvalId": approval_id}, None)

    # ------------------------------------------------------------------ runtime updates

    def update_installed(self, version: str, previous_version: str | None = None) -> None:
        payload: dict[str, Any] = {"version": version}
        if previous_version:
            payload["previousVersion"] = previous_version
        self._hold(EventType.UPDATE_INSTALLED, payload)

    def update_result(self, result: UpdateResult) -> None:
        """An update round's end (``RuntimeUpdater.finished``): installed, or the runtime in use revoked
        by its publisher and taken out of service; other outcomes change nothing."""
        if result.version is None:
            return
        if result.status is UpdateStatus.INSTALLED:
            self.update_installed(result.version)
        elif result.status is UpdateStatus.ROLLED_BACK:
            self.update_rolled_back(result.version, None, result.message)

    def update_rolled_back(self, from_version: str, to_version: str | None, reason: str) -> None:
        payload: dict[str, Any] = {"fromVersion": from_version, "reason": reason[:2000] or "rolled back"}
        if to_version:
            payload["toVersion"] = to_version
        self._hold(EventType.UPDATE_ROLLED_BACK, payload)

    # ------------------------------------------------------------------ stopping

    def close(self, timeout: float = 2.0) -> None:
        """Send what is queued within ``timeout`` seconds, then stop (blocking: call it off the Qt
        thread, e.g. ``await asyncio.to_thread(audit.close)``)."""
        with self._lock:
            self._stopping = True
            self._lock.notify_all()
        worker = self._worker
        if worker is not None:
            worker.join(timeout)

    def wait_sent(self, timeout: float) -> bool:
        """Wait until the queue is empty and nothing is in flight (tests); whether it is."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._queue or self._in_flight:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._lock.wait(left)
        return True

    # ------------------------------------------------------------------ inside (window's thread)

    def _approval(
        self,
        session_id: str,
        event_type: EventType,
        payload: dict[str, Any],
        request: Mapping[str, Any] | None,
    ) -> None:
        session = next((s for s in self.sessions() if s.session_id == session_id), None)
        if session is None or not session.audited:
            return
        ids: dict[str, str] = {}
        if request is not None:
            for key in ("taskId", "stepId"):
                value = request.get(key)
                if isinstance(value, str) and value:
                    ids[key] = value
        self._put(session, event_type, payload, Component.LOCAL_APPROVAL_UI, BoundedContext.APPROVAL, ids)
        self.pump()

    def _hold(self, event_type: EventType, payload: dict[str, Any]) -> None:
        if len(self._held) >= MAX_HELD_UPDATES:
            self.dropped += 1
            return
        self._held.append((event_type, payload))
        self.pump()

    def _put(
        self,
        session: SessionRef,
        event_type: EventType,
        payload: dict[str, Any],
        component: Component,
        context: BoundedContext,
        ids: Mapping[str, str] | None = None,
    ) -> None:
        access = self._access
        if access is None:
            logger.debug("no backend yet: the %s event is not recorded", event_type.value)
            return
        severity = Severity.WARNING if event_type in _WARNINGS else Severity.INFO
        envelope: dict[str, Any] = {
            "eventId": f"evt_{uuid.uuid4().hex}",
            "eventType": event_type.value,
            "timestamp": self._clock().isoformat().replace("+00:00", "Z"),
            "tenantId": access.tenant_id,
            "userId": access.user_id,
            "workspaceId": session.workspace_id,
            "sessionId": session.session_id,
            **(ids or {}),
            "component": component.value,
            "boundedContext": context.value,
            "severity": severity.value,
            "payload": payload,
        }
        with self._lock:
            if len(self._queue) >= MAX_QUEUED:
                self.dropped += 1
                return
            self._queue.append(envelope)
            self._lock.notify_all()
        self._start()

    def _start(self) -> None:
        with self._lock:
            if self._worker is not None or self._access is None or self._stopping:
                return
            self._worker = threading.Thread(target=self._work, name="desktop-audit", daemon=True)
            self._worker.start()

    # ------------------------------------------------------------------ the worker thread

    def _work(self) -> None:
        access = self._access
        assert access is not None
        failures = 0
        with httpx.Client(
            base_url=access.url,
            headers={"authorization": f"Bearer {access.token}"},
            timeout=httpx.Timeout(10.0, connect=5.0),
            follow_redirects=False,
            # A proxy must not see the token of a backend on this machine (plain http on loopback).
            trust_env=urlsplit(access.url).hostname not in _LOOPBACK,
            transport=self._transport,
        ) as http:
            while True:
                with self._lock:
                    if not self._queue and not self._stopping:
                        self._lock.wait()
                    if not self._queue:
                        if self._stopping:
                            return
                        continue
                    if not self._stopping and failures == 0:
                        # A moment for others to join the batch (a decision follows a shown request).
                        self._lock.wait(self._flush_after_s)
                    batch = [self._queue[i] for i in range(min(BATCH, len(self._queue)))]
                    self._in_flight = len(batch)
                taken = self._send(http, batch)
                with self._lock:
                    self._in_flight = 0
                    if taken:
                        failures = 0
                        for _ in batch:
                            self._queue.popleft()
                    else:
                        failures += 1
                    self._lock.notify_all()
                    if failures:
                        if self._stopping:
                            return  # quitting: a backend that is down is not waited for
                        backoff = RetryPolicy(base_s=self._base_delay_s, cap_s=self._max_delay_s)
                        # New events do not cut the wait short, a quit does.
                        until = time.monotonic() + backoff.delay(failures, random_module.random)
                        while not self._stopping and (left := until - time.monotonic()) > 0:
                            self._lock.wait(left)

    def _send(self, http: httpx.Client, batch: list[dict[str, Any]]) -> bool:
        """Whether the backend took ``batch`` (what it refused is dropped and logged); False when it
        could not take it now."""
        while batch:
            try:
                response = http.post(
                    "/audit/events",
                    content=json.dumps(batch, separators=(",", ":")).encode(),
                    headers={"content-type": "application/json"},
                )
            except httpx.HTTPError as exc:
                logger.info("the Audit Service could not be reached: %s", exc)
                return False
            if response.status_code < 300:
                with self._lock:
                    self.sent += len(batch)
                return True
            if response.status_code in (401, 408, 429) or response.status_code >= 500:
                logger.info("the Audit Service answered HTTP %d; trying again later", response.status_code)
                return False
            batch = self._refused(batch, response)
        return True

    def _refused(self, batch: list[dict[str, Any]], response: httpx.Response) -> list[dict[str, Any]]:
        try:
            field_name = str(response.json().get("details", {}).get("field", ""))
        except (ValueError, AttributeError):
            field_name = ""
        found = _INDEX.match(field_name)
        with self._lock:
            if found is not None and int(found.group(1)) < len(batch):
                index = int(found.group(1))
                self.dropped += 1
                logger.error(
                    "the Audit Service refused a %s event: %s", batch[index]["eventType"], response.text[:300]
                )
                return batch[:index] + batch[index + 1 :]
            self.dropped += len(batch)
        logger.error("the Audit Service refused %d event(s): HTTP %d", len(batch), response.status_code)
        return []


_WARNINGS = frozenset({EventType.APPROVAL_TIMEOUT, EventType.UPDATE_ROLLED_BACK})
