"""What the Session Service needs from other services, as small interfaces the app factory wires —
in process in the combined app, over HTTP when the services run apart (seed 001 §11: backend
services never import one another)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, Protocol

from backend.common.auth import Principal
from contracts.enums import Capability, WorkspaceScope
from contracts.rest.policies import IssuedBundle
from contracts.rest.workspaces import WorkspaceResource

__all__ = ["PolicyProvider", "PolicyStanding", "PolicyStatusReader", "WorkspaceResolver"]


class PolicyProvider(Protocol):
    def issue(
        self,
        principal: Principal,
        session_id: str,
        workspace_paths: Sequence[str],
        supported: Sequence[Capability] | None,
    ) -> IssuedBundle: ...


class WorkspaceResolver(Protocol):
    def resolve(
        self, principal: Principal, scope: WorkspaceScope, local_paths: Sequence[str]
    ) -> WorkspaceResource: ...


class PolicyStanding(NamedTuple):
    """A tenant's policy version (one per administrator change) and whether it is revoked."""

    version: int
    revoked: bool
    reason: str | None


class PolicyStatusReader(Protocol):
    def standing(self, tenant_id: str) -> PolicyStanding:
        """Read now (a file stat when nothing changed): the Session Service polls it for every tenant
        with a connected session."""
        ...
