"""The Workspace Service's storage interfaces: metadata (:class:`WorkspaceRepository`) and artifact
bytes (:class:`ContentStore`) — DynamoDB and S3 on AWS, SQLite and files locally (seed 001 §8).

A repository may also keep small content *inline*, with its metadata (``inline_content_limit`` > 0):
written in the same atomic step as the record and read back in the same query. The local store does,
which spares a small upload the file, its two fsyncs and its rename, and a read the file open.

The repository also keeps the workspace's full-text search index (:mod:`backend.workspace.search`):
the service hands each write the documents extracted from its content, and the repository stores them
with the record — in the same transaction where the store has one — and drops them with it. A record
written without documents (``documents=None``) is *unindexed* until :meth:`index_artifact` catches up,
which is how data stored before the index existed gets indexed.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from backend.workspace.records import ArtifactRecord, WorkspaceRecord
from backend.workspace.search import SearchDocument, SearchPage, SearchQuery

__all__ = [
    "BytesContent",
    "Content",
    "ContentStore",
    "HistoryWrite",
    "StoredObject",
    "WorkspaceRepository",
    "check_inline",
]


@dataclass(frozen=True, slots=True)
class HistoryWrite:
    """What :meth:`WorkspaceRepository.put_history` did."""

    stored: ArtifactRecord
    """The session_history record now stored: the one written, or the newer one that was kept."""
    replaced: ArtifactRecord | None
    """The older record the write took the place of (its content can go), if any."""
    written: bool


class WorkspaceRepository(Protocol):
    inline_content_limit: int
    """The largest content, in bytes, this repository keeps inline with its record (0: none)."""

    def touch_or_create(self, record: WorkspaceRecord) -> WorkspaceRecord:
        """Create ``record`` if its ID is new; otherwise set the stored one's ``lastActiveAt`` and
        ``localPaths`` from it. Atomic: concurrent calls for one ID end with one workspace."""
        ...

    def get(self, tenant_id: str, workspace_id: str) -> WorkspaceRecord | None: ...

    def list_for_owner(self, tenant_id: str, user_id: str) -> list[WorkspaceRecord]:
        """The owner's workspaces, most recently active first."""
        ...

    def delete(
        self, tenant_id: str, workspace_id: str, *, inactive_before: datetime | None = None
    ) -> list[ArtifactRecord] | None:
        """Remove the workspace and all its artifact records (and search documents); the removed
        artifacts (so their content can be deleted), or None if there was no such workspace in the tenant.

        With ``inactive_before``, only if the workspace was last active before then — checked in the
        same atomic step, so a purge never removes a workspace that a new session just used."""
        ...

    def list_inactive(self, before: datetime, limit: int) -> list[WorkspaceRecord]:
        """Workspaces of any tenant last active before ``before`` (maintenance)."""
        ...

    def put_artifact(
        self,
        record: ArtifactRecord,
        content: bytes | None = None,
        *,
        documents: Sequence[SearchDocument] | None = None,
    ) -> ArtifactRecord | None:
        """Insert ``record`` unless its ID exists: None if inserted, else the existing record.

        ``content`` is given exactly when ``record.inline``: the bytes, stored with the record in the
        same atomic write (at most ``inline_content_limit`` of them). ``documents``: the record's search
        documents, stored only if the record is (None: the record is left unindexed)."""
        ...

    def put_history(
        self,
        record: ArtifactRecord,
        content: bytes | None = None,
        *,
        documents: Sequence[SearchDocument] | None = None,
    ) -> HistoryWrite:
        """Store a session_history record if there is none for its ID or the stored one's
        ``order_key`` is lower — a conditional write, so concurrent uploads keep the newest.
        ``content`` as for :meth:`put_artifact`; inline content of a replaced record goes with it, and
        so do its search documents (replaced by ``documents``)."""
        ...

    def get_artifact(self, tenant_id: str, workspace_id: str, artifact_id: str) -> ArtifactRecord | None: ...

    def get_artifact_content(
        self, tenant_id: str, workspace_id: str, artifact_id: str
    ) -> tuple[ArtifactRecord, bytes | None] | None:
        """Like :meth:`get_artifact`, with the record's inline content (read in the same query); the
        content is None when the record is not ``inline`` (its bytes are in the content store)."""
        ...

    def list_artifacts(
        self,
        tenant_id: str,
        workspace_id: str,
        *,
        session_id: str | None = None,
        task_id: str | None = None,
        artifact_type: str | None = None,
    ) -> list[ArtifactRecord]:
        """The workspace's artifacts matching every filter given, oldest first."""
        ...

    def find_artifact(self, workspace_id: str, artifact_id: str) -> ArtifactRecord | None:
        """An artifact by ID regardless of tenant (maintenance: orphan sweeps)."""
        ...

    def orphaned_artifacts(self, limit: int) -> list[ArtifactRecord]:
        """Artifact records whose workspace no longer exists (maintenance)."""
        ...

    def delete_artifacts(self, records: list[ArtifactRecord]) -> None:
        """Remove these artifact records and their search documents (maintenance)."""
        ...

    def search(self, tenant_id: str, workspace_id: str, query: SearchQuery) -> SearchPage:
        """The workspace's documents matching ``query`` (only its ``session_id``'s, if set), best first,
        one hit per message or artifact, at most ``query.limit``. Nothing of another tenant or
        workspace, whatever the IDs given."""
        ...

    def unindexed_artifacts(self, limit: int) -> list[ArtifactRecord]:
        """Artifact records of any tenant stored without search documents (maintenance)."""
        ...

    def index_artifact(self, record: ArtifactRecord, documents: Sequence[SearchDocument]) -> bool:
        """Store ``documents`` as the search documents of ``record``, if it is still the stored version
        (same content); whether it was (maintenance: indexing what was stored unindexed)."""
        ...


@dataclass(frozen=True, slots=True)
class StoredObject:
    key: str
    modified_at: datetime
    size: int


class Content(Protocol):
    """Artifact bytes being read: iterate ``chunks()`` once, then ``close()``."""

    size: int

    def chunks(self) -> Iterator[bytes]: ...

    def close(self) -> None: ...


class BytesContent:
    """Content already in memory (inline content, or a test's)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.size = len(data)

    def chunks(self) -> Iterator[bytes]:
        yield self.data

    def close(self) -> None:
        return None


def check_inline(record: ArtifactRecord, content: bytes | None, limit: int) -> None:
    """What every repository checks before writing ``record`` with ``content`` (a service bug
    otherwise): content exactly for inline records, within the repository's limit."""
    if record.inline != (content is not None):
        raise ValueError("content is given exactly for inline records")
    if content is not None and (limit == 0 or len(content) > limit or len(content) != record.size_bytes):
        raise ValueError(f"inline content is at most {limit} bytes here and matches sizeBytes")


class ContentStore(Protocol):
    def put(self, key: str, data: bytes, content_type: str) -> None:
        """Store ``data`` under ``key`` durably and atomically (readers see all of it or none)."""
        ...

    def open(self, key: str) -> Content | None: ...

    def delete(self, key: str) -> None:
        """Remove ``key``; no error if it is already gone."""
        ...

    def delete_prefix(self, prefix: str) -> None:
        """Remove every key starting with ``prefix`` (a workspace's ``{workspaceId}/``)."""
        ...

    def list(self, prefix: str = "") -> Iterator[StoredObject]: ...
