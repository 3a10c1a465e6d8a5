"""Workspace Service payloads: workspaces and their artifacts (seed 004 Workspace, session_history;
seed 000 §7.5; seed 001 §3).

* ``POST /workspaces`` → :class:`ResolveWorkspaceRequest` → :class:`WorkspaceResource`: a ``local``
  workspace is found by tenant, user and normalised project path (created on first use, its
  ``lastActiveAt`` refreshed on every resolve); ``general`` is a fresh workspace every time.
* ``GET /workspaces`` → :class:`WorkspaceList` (the caller's), ``GET``/``DELETE /workspaces/{id}`` (delete
  removes every artifact and history permanently).
* ``POST /workspaces/{id}/artifacts`` → :class:`ArtifactUploadRequest` → :class:`ArtifactUploadResponse`.
  An ``Idempotency-Key`` header makes a retry return the first upload; without one the artifact ID is
  derived from the upload's IDs, name and content, so an identical retry is still no duplicate. A
  ``session_history`` artifact is the session's one snapshot (content: ``SessionHistory`` JSON) and is
  replaced only by a newer ``snapshotAt``.
* ``GET /workspaces/{id}/artifacts?sessionId=&taskId=&artifactType=`` → :class:`ArtifactList`;
  ``GET …/artifacts/{artifactId}`` → :class:`ArtifactMetadata`; ``GET …/artifacts/{artifactId}/content``
  → the bytes, with the artifact's content type.
* ``GET /workspaces/{id}/search?query=&limit=&sessionId=`` → :class:`WorkspaceSearchResult`: full-text
  search over the workspace's conversations (its ``session_history`` messages) and text artifacts, best
  match first, each hit with a snippet (matched words in ``**bold**``) and what it refers to.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from contracts._base import UtcDatetime, WireModel
from contracts.enums import ArtifactType, Role, WorkspaceScope
from contracts.rest._fields import Identifier, MediaType, Name

__all__ = [
    "ArtifactList",
    "ArtifactMetadata",
    "ArtifactUploadRequest",
    "ArtifactUploadResponse",
    "ResolveWorkspaceRequest",
    "WorkspaceList",
    "WorkspaceResource",
    "WorkspaceSearchHit",
    "WorkspaceSearchResult",
]


class ResolveWorkspaceRequest(WireModel):
    workspace_scope: WorkspaceScope
    local_paths: list[str] | None = Field(default=None, min_length=1, max_length=16)
    """Absolute project paths; required for ``local``, where the first one identifies the workspace."""

    @model_validator(mode="after")
    def _paths_fit_the_scope(self) -> ResolveWorkspaceRequest:
        if self.workspace_scope is WorkspaceScope.LOCAL and not self.local_paths:
            raise ValueError("a local workspace needs localPaths")
        return self


class WorkspaceResource(WireModel):
    workspace_id: str
    workspace_scope: WorkspaceScope
    created_at: UtcDatetime
    last_active_at: UtcDatetime
    """The last time a session was created under this workspace (seed 004)."""
    local_paths: list[str] = Field(default_factory=list)
    """The normalised project paths of a ``local`` workspace as last resolved; empty otherwise."""


class WorkspaceList(WireModel):
    workspaces: list[WorkspaceResource]


class ArtifactUploadRequest(WireModel):
    """An artifact upload, field for field as the runtime sends it (seed 000 §7.5)."""

    workspace_id: Identifier
    session_id: Identifier
    task_id: Identifier | None = None
    step_id: Identifier | None = None
    artifact_type: ArtifactType
    artifact_name: Name
    content_type: MediaType
    content_base64: str
    """The content, standard base64 with padding (RFC 4648 §4)."""

    @model_validator(mode="after")
    def _the_id_chain_is_complete(self) -> ArtifactUploadRequest:
        # A session_history snapshot belongs to the session as a whole; an attachment to the task whose
        # prompt carried it; every other artifact comes out of one step and carries the full chain
        # (seed 004 ID Chain).
        if self.artifact_type is ArtifactType.ATTACHMENT:
            if self.task_id is None:
                raise ValueError("an attachment artifact needs taskId")
        elif self.artifact_type is not ArtifactType.SESSION_HISTORY and (
            self.task_id is None or self.step_id is None
        ):
            raise ValueError(f"a {self.artifact_type.value} artifact needs taskId and stepId")
        return self


class ArtifactMetadata(WireModel):
    artifact_id: str
    artifact_uri: str
    """``cowork://workspaces/{workspaceId}/artifacts/{artifactId}`` — what a ToolResult references."""
    workspace_id: str
    session_id: str
    task_id: str | None = None
    step_id: str | None = None
    artifact_type: ArtifactType
    artifact_name: str
    content_type: str
    size_bytes: int = Field(ge=0)
    sha256: str
    created_at: UtcDatetime
    updated_at: UtcDatetime
    snapshot_at: UtcDatetime | None = None
    """For ``session_history``: the snapshot's own ``snapshotAt``, which orders replacements."""


class ArtifactUploadResponse(ArtifactMetadata):
    outcome: Literal["created", "replaced", "unchanged", "superseded"]
    """``created`` (201); ``replaced``: a newer session_history snapshot took the old one's place
    (201); ``unchanged``: a retry of an upload already stored (200); ``superseded``: a session_history
    snapshot older than the stored one, which is kept and returned (200)."""


class ArtifactList(WireModel):
    artifacts: list[ArtifactMetadata]


class WorkspaceSearchHit(WireModel):
    """One match: a message of a session's conversation, or a text artifact."""

    kind: Literal["message", "artifact"]
    session_id: str
    task_id: str | None = None
    message_id: str | None = None
    """``message``: the message's ``messageId`` in the session's history."""
    role: Role | None = None
    """``message``: who wrote it."""
    artifact_id: str
    """``artifact``: the artifact; ``message``: the session's ``session_history`` artifact holding it."""
    artifact_uri: str
    artifact_name: str | None = None
    """``artifact``: its name."""
    timestamp: UtcDatetime
    """When the message was written, or the artifact uploaded."""
    snippet: str
    """The best-matching passage, matched words in ``**bold**``, cuts marked ``…``."""
    score: float = Field(ge=0)
    """Relevance (BM25): higher is better; comparable within one answer only."""


class WorkspaceSearchResult(WireModel):
    query: str
    results: list[WorkspaceSearchHit]
    truncated: bool = False
    """True when the store searched only part of the workspace (the AWS store's per-search scan bound,
    newest content first); older matches may exist."""
