"""The Session Service's storage interface (seed 001 §8 repository pattern)."""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple, Protocol

from backend.session.records import SessionRecord

__all__ = ["SessionOwnership", "SessionRepository"]


class SessionOwnership(NamedTuple):
    """Whose session it is and in which workspace: what other services check before acting on it."""

    user_id: str
    workspace_id: str


class SessionRepository(Protocol):
    def create(self, record: SessionRecord) -> None:
        """Store a new session (its ID is fresh and random)."""
        ...

    def get(self, tenant_id: str, session_id: str) -> SessionRecord | None:
        """The session if it exists *in this tenant*; None otherwise, whoever owns the ID."""
        ...

    def ownership(self, tenant_id: str, session_id: str) -> SessionOwnership | None:
        """:meth:`get`'s owner and workspace alone: every artifact upload asks, and decoding the
        whole record costs several times what reading it does."""
        ...

    def replace(self, record: SessionRecord, expected_revision: int) -> bool:
        """Store ``record`` only if the stored one still has ``expected_revision``; False if not."""
        ...

    def list_by_workspace(self, tenant_id: str, workspace_id: str, limit: int) -> list[SessionRecord]:
        """The tenant's sessions in a workspace, newest first."""
        ...

    def active_for_user(self, tenant_id: str, user_id: str, now: datetime) -> list[SessionRecord]:
        """The user's sessions that have not ended and whose policy bundle is valid at ``now``: the
        sessions the ``sessionsPerUser`` quota counts."""
        ...

    def prune_expired(self, expired_before: datetime, *, dry_run: bool = False) -> int:
        """Delete every tenant's sessions whose bundle expired before ``expired_before`` (now less
        the retention); how many went, or with ``dry_run`` would go. The AWS store answers 0: its
        items carry a TTL of the same retention and DynamoDB deletes them itself."""
        ...
