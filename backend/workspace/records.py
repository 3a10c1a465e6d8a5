"""Workspaces and artifacts as stored, with their plain-JSON document forms."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from backend.common.ids import parse_timestamp, timestamp
from contracts.enums import ArtifactType, WorkspaceScope
from contracts.rest.workspaces import ArtifactMetadata, WorkspaceResource

__all__ = ["ArtifactRecord", "WorkspaceRecord", "artifact_uri"]


def artifact_uri(workspace_id: str, artifact_id: str) -> str:
    return f"cowork://workspaces/{workspace_id}/artifacts/{artifact_id}"


@dataclass(frozen=True, slots=True)
class WorkspaceRecord:
    workspace_id: str
    tenant_id: str
    user_id: str
    scope: WorkspaceScope
    local_paths: tuple[str, ...]
    created_at: datetime
    last_active_at: datetime

    def to_document(self) -> dict[str, Any]:
        return {
            "workspaceId": self.workspace_id,
            "tenantId": self.tenant_id,
            "userId": self.user_id,
            "workspaceScope": self.scope.value,
            "localPaths": list(self.local_paths),
            "createdAt": timestamp(self.created_at),
            "lastActiveAt": timestamp(self.last_active_at),
        }

    @classmethod
    def from_document(cls, document: dict[str, Any]) -> WorkspaceRecord:
        return cls(
            workspace_id=document["workspaceId"],
            tenant_id=document["tenantId"],
            user_id=document["userId"],
            scope=WorkspaceScope(document["workspaceScope"]),
            local_paths=tuple(document["localPaths"]),
            created_at=parse_timestamp(document["createdAt"]),
            last_active_at=parse_timestamp(document["lastActiveAt"]),
        )

    def resource(self) -> WorkspaceResource:
        return WorkspaceResource(
            workspace_id=self.workspace_id,
            workspace_scope=self.scope,
            created_at=self.created_at,
            last_active_at=self.last_active_at,
            local_paths=list(self.local_paths),
        )


@dataclass(frozen=True, slots=True)
class ArtifactRecord:
    artifact_id: str
    workspace_id: str
    tenant_id: str
    user_id: str
    session_id: str
    task_id: str | None
    step_id: str | None
    artifact_type: ArtifactType
    artifact_name: str
    content_type: str
    size_bytes: int
    sha256: str
    content_key: str
    """Where the bytes are in the content store: ``{workspaceId}/{artifactId}/{sha256}``."""
    created_at: datetime
    updated_at: datetime
    snapshot_at: datetime | None = None
    inline: bool = False
    """The bytes are stored with this record by the repository (its ``inline_content_limit``), not
    in the content store: nothing is under ``content_key`` there."""

    @property
    def order_key(self) -> str:
        """How session_history snapshots are ordered: ``snapshotAt``, ties broken by content hash.

        A fixed-width string, so stores compare it as text (DynamoDB conditions, SQL) and agree.
        """
        moment = "" if self.snapshot_at is None else timestamp(self.snapshot_at)
        return f"{moment}|{self.sha256}"

    def to_document(self) -> dict[str, Any]:
        return {
            "artifactId": self.artifact_id,
            "workspaceId": self.workspace_id,
            "tenantId": self.tenant_id,
            "userId": self.user_id,
            "sessionId": self.session_id,
            "taskId": self.task_id,
            "stepId": self.step_id,
            "artifactType": self.artifact_type.value,
            "artifactName": self.artifact_name,
            "contentType": self.content_type,
            "sizeBytes": self.size_bytes,
            "sha256": self.sha256,
            "contentKey": self.content_key,
            "createdAt": timestamp(self.created_at),
            "updatedAt": timestamp(self.updated_at),
            "snapshotAt": None if self.snapshot_at is None else timestamp(self.snapshot_at),
            "orderKey": self.order_key,
            "contentInline": self.inline,
        }

    @classmethod
    def from_document(cls, document: dict[str, Any]) -> ArtifactRecord:
        snapshot = document.get("snapshotAt")
        return cls(
            artifact_id=document["artifactId"],
            workspace_id=document["workspaceId"],
            tenant_id=document["tenantId"],
            user_id=document["userId"],
            session_id=document["sessionId"],
            task_id=document.get("taskId"),
            step_id=document.get("stepId"),
            artifact_type=ArtifactType(document["artifactType"]),
            artifact_name=document["artifactName"],
            content_type=document["contentType"],
            size_bytes=int(document["sizeBytes"]),
            sha256=document["sha256"],
            content_key=document["contentKey"],
            created_at=parse_timestamp(document["createdAt"]),
            updated_at=parse_timestamp(document["updatedAt"]),
            snapshot_at=None if snapshot is None else parse_timestamp(snapshot),
            inline=bool(document.get("contentInline", False)),
        )

    def metadata(self) -> ArtifactMetadata:
        return ArtifactMetadata(**self.wire_fields())

    def wire_fields(self) -> dict[str, Any]:
        """The metadata's fields by Python name, to build :class:`ArtifactMetadata` or a subclass."""
        return {
            "artifact_id": self.artifact_id,
            "artifact_uri": artifact_uri(self.workspace_id, self.artifact_id),
            "workspace_id": self.workspace_id,
            "session_id": self.session_id,
            "task_id": self.task_id,
            "step_id": self.step_id,
            "artifact_type": self.artifact_type,
            "artifact_name": self.artifact_name,
            "content_type": self.content_type,
            "size_bytes": self.size_bytes,
            "sha256": self.sha256,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "snapshot_at": self.snapshot_at,
        }
