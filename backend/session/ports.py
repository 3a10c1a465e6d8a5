"""What the Session Service needs from other services, as small interfaces the app factory wires —
in process in the combined app, over HTTP when the services run apart (seed 001 §11: backend
services never import one another)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from backend.common.auth import Principal
from contracts.enums import Capability, WorkspaceScope
from contracts.rest.policies import IssuedBundle
from contracts.rest.workspaces import WorkspaceResource

__all__ = ["PolicyProvider", "WorkspaceResolver"]


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
