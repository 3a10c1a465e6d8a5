"""What the Backend Tool Service asks of the other services, wired by the app factory: in one app the
service objects themselves, across apps an HTTP adapter (:mod:`backend.peers`). The service owns no
data of its own (seed 001 §8: it is stateless)."""

from __future__ import annotations

from typing import Protocol

from backend.common.auth import Principal
from contracts.rest.workspaces import WorkspaceSearchResult

__all__ = ["SessionDirectory", "ToolAllowlist", "WorkspaceSearcher"]


class SessionDirectory(Protocol):
    def workspace_of(self, principal: Principal, session_id: str) -> str | None:
        """The workspace of the caller's session ``session_id``; None if the caller has no such session."""
        ...


class ToolAllowlist(Protocol):
    def allowed_tool_names(self, tenant_id: str) -> frozenset[str] | None:
        """The tool names the tenant's ``BackendTool.Invoke`` grant allows (``allowedToolNames``): None
        for every tool (a grant without the list), empty without the grant. Raises a ``BackendError``
        when the tenant's policy cannot be read."""
        ...


class WorkspaceSearcher(Protocol):
    def search(
        self,
        principal: Principal,
        workspace_id: str,
        query: str,
        *,
        limit: int = 10,
        session_id: str | None = None,
    ) -> WorkspaceSearchResult:
        """The Workspace Service's search of the caller's workspace."""
        ...
