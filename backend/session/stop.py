"""Remote admin stop of a session (the Session Service's ``POST /sessions/{id}/stop`` and
``cowork-backend session stop``): the session ends ``SESSION_CANCELLED`` with the administrator's
reason and can no longer be resumed; the push tells its runtime (``session_stop``), which cancels the
task and ends the session as for a cancel (seed 000 §3.3, §3.4)."""

from __future__ import annotations

import dataclasses

from backend.common.clock import Clock
from backend.common.errors import BackendError, session_not_found
from backend.session.records import TERMINAL, SessionRecord
from backend.session.repository import SessionRepository
from contracts.enums import SessionStatus
from contracts.errors import ErrorCode

__all__ = ["stop_session"]

_MAX_WRITE_ATTEMPTS = 8


def stop_session(
    repository: SessionRepository,
    clock: Clock,
    *,
    tenant_id: str,
    session_id: str,
    stopped_by: str,
    reason: str | None,
) -> SessionRecord:
    """The stopped record; one that had already ended is returned as it is (idempotent).
    ``SESSION_NOT_FOUND`` when the tenant has no such session."""
    said = " ".join((reason or "").split())
    for _ in range(_MAX_WRITE_ATTEMPTS):
        record = repository.get(tenant_id, session_id)
        if record is None:
            raise session_not_found(session_id)
        if record.status in TERMINAL:
            return record
        now = clock.now()
        updated = dataclasses.replace(
            record,
            status=SessionStatus.SESSION_CANCELLED,
            end_reason=f"Stopped by an administrator: {said}" if said else "Stopped by an administrator",
            ended_at=now,
            updated_at=now,
            revision=record.revision + 1,
            stopped_by=stopped_by,
        )
        if repository.replace(updated, record.revision):
            return updated
    raise BackendError(
        ErrorCode.INVALID_REQUEST,
        "The session is being changed by another request; retry",
        status_code=409,
        retryable=True,
        details={"sessionId": session_id},
    )
