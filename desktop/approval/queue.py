"""The approval requests waiting for the user, oldest first (seed 000 §10.2–10.3). Qt-free.

Every conversation's runtime sends its ``approval_requested`` events here; the dialog shows the head
and the others wait their turn. A request leaves the queue when it is answered, when the runtime says
it was resolved some other way (``approval_resolved``, ``approval_timeout``), when its conversation
goes away, or when its own time runs out (:meth:`ApprovalQueue.expire`).

Time is ``time.monotonic()`` seconds: the countdown runs from when the request arrived here, for the
``timeoutSeconds`` the runtime announced, so a wall clock that jumps cannot make it lie.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

__all__ = ["ApprovalQueue", "PendingApproval", "PendingRequest", "RequestQueue"]


@dataclass(frozen=True)
class PendingRequest:
    """A runtime's request waiting for the user: ``request`` is its event payload (wire dict), named
    by its :attr:`id_field`; the countdown runs from ``received_at``."""

    id_field: ClassVar[str]

    session_id: str
    request: dict[str, Any]
    received_at: float

    @property
    def key(self) -> str:
        return str(self.request[self.id_field])

    @property
    def timeout_seconds(self) -> float | None:
        """How long the runtime waits for an answer, or ``None`` when the request does not say."""
        value = self.request.get("timeoutSeconds")
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        return float(value) if math.isfinite(value) and value > 0 else None

    def seconds_left(self, now: float) -> float:
        """Seconds until the runtime stops waiting (never below 0); ``math.inf`` when it did not say."""
        timeout = self.timeout_seconds
        if timeout is None:
            return math.inf
        return max(0.0, self.received_at + timeout - now)


P = TypeVar("P", bound=PendingRequest)


class RequestQueue(Generic[P]):
    """Pending requests of every conversation in arrival order; subscribers hear of every change.
    One queue for each kind of request a dialog answers (approvals here, MCP elicitations in
    :mod:`desktop.mcp.elicitations`)."""

    def __init__(self, id_field: str, what: str) -> None:
        self._id_field = id_field
        self._what = what
        self._pending: dict[str, P] = {}
        self._subscribers: list[Callable[[], None]] = []

    def _add(self, request: dict[str, Any], make: Callable[[dict[str, Any]], P]) -> P:
        """Queue ``make(a copy of request)``; one already queued (the same id) is kept as it is and
        returned. ``ValueError`` when the request has no id: nothing could ever answer it."""
        key = request.get(self._id_field)
        if not isinstance(key, str) or not key:
            raise ValueError(f"{self._what} needs an {self._id_field}")
        existing = self._pending.get(key)
        if existing is not None:
            return existing
        pending = make(dict(request))
        self._pending[key] = pending
        self._changed()
        return pending

    def discard(self, key: str) -> None:
        """Forget a request (answered, resolved elsewhere, timed out); unknown ids are ignored."""
        if self._pending.pop(key, None) is not None:
            self._changed()

    def discard_session(self, session_id: str) -> None:
        """Forget every request of one conversation (its runtime ended or died)."""
        kept = {key: item for key, item in self._pending.items() if item.session_id != session_id}
        if len(kept) != len(self._pending):
            self._pending = kept
            self._changed()

    def expire(self, now: float) -> list[P]:
        """Remove and return the requests whose time ran out: the runtime has given up on them."""
        expired = [item for item in self._pending.values() if item.seconds_left(now) <= 0]
        for item in expired:
            del self._pending[item.key]
        if expired:
            self._changed()
        return expired

    def head(self) -> P | None:
        return next(iter(self._pending.values()), None)

    def pending(self) -> list[P]:
        return list(self._pending.values())

    def get(self, key: str) -> P | None:
        return self._pending.get(key)

    def __len__(self) -> int:
        return len(self._pending)

    def subscribe(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` after every change of the queue."""
        self._subscribers.append(callback)

    def unsubscribe(self, callback: Callable[[], None]) -> None:
        """Stop calling ``callback``; one that was never subscribed is ignored."""
        if callback in self._subscribers:
            self._subscribers.remove(callback)

    def _changed(self) -> None:
        for callback in list(self._subscribers):
            callback()


@dataclass(frozen=True)
class PendingApproval(PendingRequest):
    """One request: ``request`` is the ``approval_requested`` payload, the ApprovalRequest wire dict."""

    id_field: ClassVar[str] = "approvalId"

    @property
    def approval_id(self) -> str:
        return self.key

    @property
    def title(self) -> str:
        return str(self.request.get("title") or "Approval needed")

    @property
    def risk(self) -> str:
        """``low``, ``medium`` or ``high``; anything else the runtime sent counts as ``high``."""
        risk = self.request.get("riskLevel")
        return risk if risk in ("low", "medium", "high") else "high"


class ApprovalQueue(RequestQueue[PendingApproval]):
    """Pending approvals of every conversation in arrival order (an expired one the runtime has
    denied by now)."""

    def __init__(self) -> None:
        super().__init__("approvalId", "an approval request")

    def add(self, session_id: str, request: dict[str, Any], *, received_at: float) -> PendingApproval:
        """Queue a request; one already queued (the same ``approvalId``) is kept as it is and returned.

        ``ValueError`` when the request has no ``approvalId``: nothing could ever answer it."""
        return self._add(
            request,
            lambda copy: PendingApproval(session_id=session_id, request=copy, received_at=received_at),
        )
