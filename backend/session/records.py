"""The session as stored, and its plain-JSON document form (what every store persists)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from backend.common.ids import parse_timestamp, timestamp
from contracts.enums import Capability, ExecutionEnvironment, SessionStatus, WorkspaceScope
from contracts.methods import ClientInfo
from contracts.validation import validate_json_value

__all__ = ["TERMINAL", "SessionRecord"]

TERMINAL = frozenset(
    {SessionStatus.SESSION_COMPLETED, SessionStatus.SESSION_FAILED, SessionStatus.SESSION_CANCELLED}
)


@dataclass(frozen=True, slots=True)
class SessionRecord:
    session_id: str
    tenant_id: str
    user_id: str
    workspace_id: str
    workspace_scope: WorkspaceScope
    workspace_paths: tuple[str, ...]
    execution_environment: ExecutionEnvironment
    status: SessionStatus
    client_info: ClientInfo
    supported_capabilities: tuple[Capability, ...]
    granted_capabilities: tuple[Capability, ...]
    policy_bundle_version: str
    created_at: datetime
    updated_at: datetime
    expires_at: datetime
    revision: int = 1
    """Bumped on every change; a write names the revision it read, so concurrent changes never
    overwrite each other (optimistic concurrency)."""
    checkpoint_cursor: str | None = None
    end_reason: str | None = None
    ended_at: datetime | None = None
    tenant_policy_version: int = 0
    """The tenant's policy version (``cowork-backend policy set|revoke``) its bundle was issued under:
    a newer one is pushed to the running session (:mod:`backend.session.push`)."""
    stopped_by: str | None = None
    """The administrator who stopped the session (remote admin stop); ``end_reason`` says why."""

    def to_document(self) -> dict[str, Any]:
        return {
            "sessionId": self.session_id,
            "tenantId": self.tenant_id,
            "userId": self.user_id,
            "workspaceId": self.workspace_id,
            "workspaceScope": self.workspace_scope.value,
            "workspacePaths": list(self.workspace_paths),
            "executionEnvironment": self.execution_environment.value,
            "status": self.status.value,
            "clientInfo": self.client_info.to_wire(),
            "supportedCapabilities": [c.value for c in self.supported_capabilities],
            "grantedCapabilities": [c.value for c in self.granted_capabilities],
            "policyBundleVersion": self.policy_bundle_version,
            "createdAt": timestamp(self.created_at),
            "updatedAt": timestamp(self.updated_at),
            "expiresAt": timestamp(self.expires_at),
            "revision": self.revision,
            "checkpointCursor": self.checkpoint_cursor,
            "endReason": self.end_reason,
            "endedAt": None if self.ended_at is None else timestamp(self.ended_at),
            "tenantPolicyVersion": self.tenant_policy_version,
            "stoppedBy": self.stopped_by,
        }

    @classmethod
    def from_document(cls, document: dict[str, Any]) -> SessionRecord:
        ended = document.get("endedAt")
        return cls(
            session_id=document["sessionId"],
            tenant_id=document["tenantId"],
            user_id=document["userId"],
            workspace_id=document["workspaceId"],
            workspace_scope=WorkspaceScope(document["workspaceScope"]),
            workspace_paths=tuple(document["workspacePaths"]),
            execution_environment=ExecutionEnvironment(document["executionEnvironment"]),
            status=SessionStatus(document["status"]),
            client_info=validate_json_value(ClientInfo, document["clientInfo"]),
            supported_capabilities=tuple(Capability(c) for c in document["supportedCapabilities"]),
            granted_capabilities=tuple(Capability(c) for c in document["grantedCapabilities"]),
            policy_bundle_version=document["policyBundleVersion"],
            created_at=parse_timestamp(document["createdAt"]),
            updated_at=parse_timestamp(document["updatedAt"]),
            expires_at=parse_timestamp(document["expiresAt"]),
            revision=int(document["revision"]),
            checkpoint_cursor=document.get("checkpointCursor"),
            end_reason=document.get("endReason"),
            ended_at=None if ended is None else parse_timestamp(ended),
            # Absent from records stored before policy versions and admin stops existed.
            tenant_policy_version=int(document.get("tenantPolicyVersion") or 0),
            stopped_by=document.get("stoppedBy"),
        )
