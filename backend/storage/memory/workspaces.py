"""Workspaces, artifact metadata and search documents in dictionaries; search ranks them with
:func:`backend.workspace.search.rank`."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Sequence
from datetime import datetime

from backend.workspace.records import ArtifactRecord, WorkspaceRecord
from backend.workspace.repository import HistoryWrite, check_inline
from backend.workspace.search import SearchDocument, SearchPage, SearchQuery, rank

__all__ = ["MemoryWorkspaceRepository"]


class MemoryWorkspaceRepository:
    # The content store is a dictionary too: keeping content with the records would gain nothing.
    inline_content_limit = 0

    def __init__(self) -> None:
        self._workspaces: dict[str, WorkspaceRecord] = {}
        self._artifacts: dict[tuple[str, str], ArtifactRecord] = {}
        self._documents: dict[tuple[str, str], tuple[SearchDocument, ...]] = {}
        """Search documents by artifact key; an artifact without an entry is unindexed."""
        self._lock = threading.Lock()

    def touch_or_create(self, record: WorkspaceRecord) -> WorkspaceRecord:
        with self._lock:
            current = self._workspaces.get(record.workspace_id)
            if current is not None:
                record = dataclasses.replace(
                    current,
                    last_active_at=max(current.last_active_at, record.last_active_at),
                    local_paths=record.local_paths,
                )
            self._workspaces[record.workspace_id] = record
            return record

    def get(self, tenant_id: str, workspace_id: str) -> WorkspaceRecord | None:
        record = self._workspaces.get(workspace_id)
        return record if record is not None and record.tenant_id == tenant_id else None

    def list_for_owner(self, tenant_id: str, user_id: str) -> list[WorkspaceRecord]:
        with self._lock:
            found = [
                w for w in self._workspaces.values() if w.tenant_id == tenant_id and w.user_id == user_id
            ]
        return sorted(found, key=lambda w: w.last_active_at, reverse=True)

    def delete(
        self, tenant_id: str, workspace_id: str, *, inactive_before: datetime | None = None
    ) -> list[ArtifactRecord] | None:
        with self._lock:
            current = self.get(tenant_id, workspace_id)
            if current is None or (inactive_before is not None and current.last_active_at >= inactive_before):
                return None
            del self._workspaces[workspace_id]
            keys = [key for key in self._artifacts if key[0] == workspace_id]
            for key in keys:
                self._documents.pop(key, None)
            return [self._artifacts.pop(key) for key in keys]

    def list_inactive(self, before: datetime, limit: int) -> list[WorkspaceRecord]:
        with self._lock:
            return [w for w in self._workspaces.values() if w.last_active_at < before][:limit]

    def put_artifact(
        self,
        record: ArtifactRecord,
        content: bytes | None = None,
        *,
        documents: Sequence[SearchDocument] | None = None,
    ) -> ArtifactRecord | None:
        check_inline(record, content, self.inline_content_limit)
        key = (record.workspace_id, record.artifact_id)
        with self._lock:
            existing = self._artifacts.get(key)
            if existing is None:
                self._artifacts[key] = record
                self._set_documents(key, documents)
            return existing

    def put_history(
        self,
        record: ArtifactRecord,
        content: bytes | None = None,
        *,
        documents: Sequence[SearchDocument] | None = None,
    ) -> HistoryWrite:
        check_inline(record, content, self.inline_content_limit)
        key = (record.workspace_id, record.artifact_id)
        with self._lock:
            current = self._artifacts.get(key)
            if current is not None and current.order_key >= record.order_key:
                return HistoryWrite(stored=current, replaced=None, written=False)
            if current is not None:
                record = dataclasses.replace(record, created_at=current.created_at)
            self._artifacts[key] = record
            self._set_documents(key, documents)
            return HistoryWrite(stored=record, replaced=current, written=True)

    def _set_documents(self, key: tuple[str, str], documents: Sequence[SearchDocument] | None) -> None:
        if documents is None:
            self._documents.pop(key, None)
        else:
            self._documents[key] = tuple(documents)

    def get_artifact(self, tenant_id: str, workspace_id: str, artifact_id: str) -> ArtifactRecord | None:
        record = self._artifacts.get((workspace_id, artifact_id))
        return record if record is not None and record.tenant_id == tenant_id else None

    def get_artifact_content(
        self, tenant_id: str, workspace_id: str, artifact_id: str
    ) -> tuple[ArtifactRecord, bytes | None] | None:
        record = self.get_artifact(tenant_id, workspace_id, artifact_id)
        return None if record is None else (record, None)

    def list_artifacts(
        self,
        tenant_id: str,
        workspace_id: str,
        *,
        session_id: str | None = None,
        task_id: str | None = None,
        artifact_type: str | None = None,
    ) -> list[ArtifactRecord]:
        with self._lock:
            found = [
                a
                for (ws, _), a in self._artifacts.items()
                if ws == workspace_id
                and a.tenant_id == tenant_id
                and (session_id is None or a.session_id == session_id)
                and (task_id is None or a.task_id == task_id)
                and (artifact_type is None or a.artifact_type.value == artifact_type)
            ]
        return sorted(found, key=lambda a: (a.created_at, a.artifact_id))

    def find_artifact(self, workspace_id: str, artifact_id: str) -> ArtifactRecord | None:
        return self._artifacts.get((workspace_id, artifact_id))

    def orphaned_artifacts(self, limit: int) -> list[ArtifactRecord]:
        with self._lock:
            return [a for (ws, _), a in self._artifacts.items() if ws not in self._workspaces][:limit]

    def delete_artifacts(self, records: list[ArtifactRecord]) -> None:
        with self._lock:
            for record in records:
                self._artifacts.pop((record.workspace_id, record.artifact_id), None)
                self._documents.pop((record.workspace_id, record.artifact_id), None)

    def search(self, tenant_id: str, workspace_id: str, query: SearchQuery) -> SearchPage:
        with self._lock:
            candidates = [
                (key[1], document)
                for key, documents in self._documents.items()
                if key[0] == workspace_id and self._artifacts[key].tenant_id == tenant_id
                for document in documents
                if query.session_id is None or document.session_id == query.session_id
            ]
        return SearchPage(hits=rank(candidates, query))

    def unindexed_artifacts(self, limit: int) -> list[ArtifactRecord]:
        with self._lock:
            return [a for key, a in self._artifacts.items() if key not in self._documents][:limit]

    def index_artifact(self, record: ArtifactRecord, documents: Sequence[SearchDocument]) -> bool:
        key = (record.workspace_id, record.artifact_id)
        with self._lock:
            current = self._artifacts.get(key)
            if current is None or current.sha256 != record.sha256:
                return False
            self._documents[key] = tuple(documents)
            return True
