"""What the Approval Service asks of the Session Service, wired by the app factory."""

from __future__ import annotations

from typing import Protocol

from backend.common.auth import Principal

__all__ = ["SessionDirectory"]


class SessionDirectory(Protocol):
    def workspace_of(self, principal: Principal, session_id: str) -> str | None:
        """The workspace of the caller's session ``session_id``; None if the caller has no such session."""
        ...
