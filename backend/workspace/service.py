"""Workspaces and artifacts (seed 004 Workspace, session_history; seed 000 §7.5; seed 001 §3).

Uploads write the content first and the metadata pointer second, so a reader never finds metadata
without its bytes; content left without a pointer (a lost race, a crash between the two writes) is
deleted at once where possible and otherwise by the orphan sweep of :meth:`WorkspaceService.purge`.
Content small enough for the repository to keep inline (``inline_content_limit``) is written with its
metadata in one atomic step instead, and goes wherever its record goes.

Artifact IDs make retries idempotent: from the ``Idempotency-Key`` when there is one, otherwise from
the upload's IDs, type, name and content hash — the same upload twice is the same artifact. A
session's ``session_history`` has one ID per session, and a snapshot replaces it only if it is newer
(``snapshotAt``, ties broken by content hash), by a conditional write in every store.

Search: every upload hands the repository the search documents of its content (a history's messages, a
text artifact's text; :mod:`backend.workspace.search`), which it stores with the record.
:meth:`WorkspaceService.index_backlog` indexes records stored without them (before the index existed).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pydantic import ValidationError

from backend.common.auth import Principal
from backend.common.clock import Clock, not_in_future
from backend.common.encoding import decode_base64
from backend.common.errors import (
    BackendError,
    StorageError,
    artifact_not_found,
    invalid,
    not_json,
    session_not_found,
    too_large,
    workspace_not_found,
)
from backend.common.ids import derived_id, new_id
from backend.common.quotas import Quotas
from backend.common.settings import Settings
from backend.workspace.paths import PathProblem, normalise_project_path, workspace_key
from backend.workspace.ports import SessionDirectory
from backend.workspace.records import ArtifactRecord, WorkspaceRecord, artifact_uri
from backend.workspace.repository import BytesContent, Content, ContentStore, WorkspaceRepository
from backend.workspace.search import (
    SearchDocument,
    artifact_documents,
    history_documents,
    parse_query,
)
from contracts.enums import ArtifactType, WorkspaceScope
from contracts.errors import ErrorCode
from contracts.messages import SessionHistory
from contracts.rest.workspaces import (
    ArtifactList,
    ArtifactMetadata,
    ArtifactUploadRequest,
    ArtifactUploadResponse,
    WorkspaceList,
    WorkspaceResource,
    WorkspaceSearchHit,
    WorkspaceSearchResult,
)
from contracts.validation import invalid_request

__all__ = ["PurgeReport", "WorkspaceService"]

logger = logging.getLogger(__name__)

Outcome = Literal["created", "replaced", "unchanged", "superseded"]
_MAX_IDEMPOTENCY_KEY = 255


@dataclass(frozen=True, slots=True)
class PurgeReport:
    workspaces: int
    artifacts: int
    orphaned_artifacts: int
    orphaned_content: int


class WorkspaceService:
    def __init__(
        self,
        repository: WorkspaceRepository,
        content: ContentStore,
        sessions: SessionDirectory,
        clock: Clock,
        settings: Settings,
        *,
        quotas: Quotas | None = None,
    ) -> None:
        self._repository = repository
        self._content = content
        self._sessions = sessions
        self._clock = clock
        self._settings = settings
        # Checks the storageBytes quota before an upload and keeps count of the tenant's stored bytes.
        self._quotas = quotas

    @property
    def inline_content_limit(self) -> int:
        """Content up to this size is stored with its metadata, in one atomic write."""
        return self._repository.inline_content_limit

    def _keeps_inline(self, size: int) -> bool:
        limit = self._repository.inline_content_limit
        return limit > 0 and size <= limit

    # ------------------------------------------------------------------ workspaces

    def resolve(
        self, principal: Principal, scope: WorkspaceScope, local_paths: Sequence[str]
    ) -> WorkspaceResource:
        """``local``: the project's workspace (created on first use, ``lastActiveAt`` refreshed);
        ``general``: a fresh one (seed 004 Session Types)."""
        now = self._clock.now()
        if scope is WorkspaceScope.CLOUD:
            raise invalid("cloud workspaces are not available yet", field="workspaceScope")
        if scope is WorkspaceScope.GENERAL:
            record = WorkspaceRecord(
                new_id("ws"), principal.tenant_id, principal.user_id, scope, (), now, now
            )
            return self._repository.touch_or_create(record).resource()
        if not local_paths:
            raise invalid("a local workspace needs localPaths", field="localPaths")
        paths: list[str] = []
        for index, path in enumerate(local_paths):
            try:
                paths.append(normalise_project_path(path))
            except PathProblem as exc:
                raise invalid(f"localPaths[{index}] {exc}", field=f"localPaths[{index}]") from None
        # The ID is derived from owner and project, so the same project always finds the same
        # workspace and concurrent first sessions cannot create two.
        workspace_id = derived_id("ws", principal.tenant_id, principal.user_id, workspace_key(paths[0]))
        record = WorkspaceRecord(
            workspace_id, principal.tenant_id, principal.user_id, scope, tuple(dict.fromkeys(paths)), now, now
        )
        return self._repository.touch_or_create(record).resource()

    def get(self, principal: Principal, workspace_id: str) -> WorkspaceResource:
        return self._owned(principal, workspace_id).resource()

    def list(self, principal: Principal) -> WorkspaceList:
        records = self._repository.list_for_owner(principal.tenant_id, principal.user_id)
        return WorkspaceList(workspaces=[record.resource() for record in records])

    def delete(self, principal: Principal, workspace_id: str) -> None:
        """Permanently remove the workspace, every artifact record and all their content."""
        self._owned(principal, workspace_id)
        removed = self._repository.delete(principal.tenant_id, workspace_id)
        if removed is None:
            raise workspace_not_found(workspace_id)
        self._count_storage(principal.tenant_id, -sum(r.size_bytes for r in removed))
        self._content.delete_prefix(f"{workspace_id}/")

    # ------------------------------------------------------------------ artifacts

    def upload(
        self,
        principal: Principal,
        workspace_id: str,
        request: ArtifactUploadRequest,
        idempotency_key: str | None,
    ) -> tuple[ArtifactUploadResponse, bool]:
        """Store an artifact; the response and whether anything new was stored (201 vs 200)."""
        if request.workspace_id != workspace_id:
            raise invalid("workspaceId in the body must match the workspace in the path", field="workspaceId")
        if idempotency_key is not None and not 1 <= len(idempotency_key) <= _MAX_IDEMPOTENCY_KEY:
            raise invalid("Idempotency-Key must be 1-255 characters", field="Idempotency-Key")
        self._owned(principal, workspace_id)
        session_workspace = self._sessions.workspace_of(principal, request.session_id)
        if session_workspace is None:
            raise session_not_found(request.session_id)
        if session_workspace != workspace_id:
            raise invalid("The session belongs to another workspace", field="sessionId")
        data = self._decode(request.content_base64)
        history = (
            self._check_history(request, data)
            if request.artifact_type is ArtifactType.SESSION_HISTORY
            else None
        )
        snapshot_at = None if history is None else history.snapshot_at
        digest = hashlib.sha256(data).hexdigest()
        now = self._clock.now()
        artifact_id = self._artifact_id(principal, request, idempotency_key, digest)
        record = ArtifactRecord(
            artifact_id=artifact_id,
            workspace_id=workspace_id,
            tenant_id=principal.tenant_id,
            user_id=principal.user_id,
            session_id=request.session_id,
            task_id=request.task_id,
            step_id=request.step_id,
            artifact_type=request.artifact_type,
            artifact_name=request.artifact_name,
            content_type=request.content_type,
            size_bytes=len(data),
            sha256=digest,
            content_key=f"{workspace_id}/{artifact_id}/{digest}",
            created_at=now,
            updated_at=now,
            snapshot_at=snapshot_at,
            inline=self._keeps_inline(len(data)),
        )
        if self._quotas is not None:
            self._check_storage(record, self._quotas)
        documents = history_documents(history) if history is not None else _artifact_documents(record, data)
        if snapshot_at is not None:
            stored, outcome = self._store_history(record, data, documents)
        else:
            stored, outcome = self._store_artifact(record, data, documents)
        if snapshot_at is None and outcome == "created":
            self._count_storage(record.tenant_id, record.size_bytes)
        response = ArtifactUploadResponse(**stored.wire_fields(), outcome=outcome)
        return response, outcome in ("created", "replaced")

    def list_artifacts(
        self,
        principal: Principal,
        workspace_id: str,
        session_id: str | None,
        task_id: str | None,
        artifact_type: ArtifactType | None,
    ) -> ArtifactList:
        self._owned(principal, workspace_id)
        records = self._repository.list_artifacts(
            principal.tenant_id,
            workspace_id,
            session_id=session_id,
            task_id=task_id,
            artifact_type=None if artifact_type is None else artifact_type.value,
        )
        return ArtifactList(artifacts=[r.metadata() for r in records if r.user_id == principal.user_id])

    def get_artifact(self, principal: Principal, workspace_id: str, artifact_id: str) -> ArtifactMetadata:
        return self._owned_artifact(principal, workspace_id, artifact_id).metadata()

    def open_content(
        self, principal: Principal, workspace_id: str, artifact_id: str
    ) -> tuple[ArtifactRecord, Content]:
        """The artifact and its content: a :class:`BytesContent` when it was stored inline, else an
        open handle on the content store (the caller closes it)."""
        for _ in range(2):
            record, inline = self._owned_content(principal, workspace_id, artifact_id)
            if inline is not None:
                return record, BytesContent(inline)
            content = self._content.open(record.content_key)
            if content is not None:
                return record, content
            # Metadata always follows content, so this is a replacement racing the read: the
            # newer record's content is there.
        raise StorageError("The artifact's content is unavailable")

    def delete_session(self, principal: Principal, workspace_id: str, session_id: str) -> int:
        """Permanently remove what the caller's session stored in the workspace — its
        ``session_history`` and every artifact — with their search documents: the user deleted the
        conversation. How many artifacts went. 404 for a workspace or session that is not the caller's."""
        self._owned(principal, workspace_id)
        records = [
            record
            for record in self._repository.list_artifacts(
                principal.tenant_id, workspace_id, session_id=session_id
            )
            if record.user_id == principal.user_id
        ]
        if not records and self._sessions.workspace_of(principal, session_id) != workspace_id:
            raise session_not_found(session_id)
        self._repository.delete_artifacts(records)
        for record in records:
            if not record.inline:
                self._content.delete(record.content_key)
        self._count_storage(principal.tenant_id, -sum(record.size_bytes for record in records))
        return len(records)

    # ------------------------------------------------------------------ search

    def search(
        self,
        principal: Principal,
        workspace_id: str,
        query: str,
        *,
        limit: int = 10,
        session_id: str | None = None,
    ) -> WorkspaceSearchResult:
        """The caller's workspace searched for ``query``: messages and text artifacts, best first."""
        self._owned(principal, workspace_id)
        parsed = parse_query(query, limit=limit, session_id=session_id)
        if not parsed.terms:
            raise invalid("query has no word to search for (letters or digits)", field="query")
        page = self._repository.search(principal.tenant_id, workspace_id, parsed)
        results = []
        for hit in page.hits:
            document = hit.document
            message = document.kind == "message"
            results.append(
                WorkspaceSearchHit(
                    kind=document.kind,
                    session_id=document.session_id,
                    task_id=document.task_id,
                    message_id=document.ref_id if message else None,
                    role=document.role,
                    artifact_id=hit.artifact_id,
                    artifact_uri=artifact_uri(workspace_id, hit.artifact_id),
                    artifact_name=None if message else document.name,
                    timestamp=document.at,
                    snippet=hit.snippet,
                    score=round(hit.score, 6),
                )
            )
        return WorkspaceSearchResult(query=query, results=results, truncated=page.truncated)

    def index_backlog(self, *, batch: int = 100) -> int:
        """Index the artifacts stored without search documents (before the index existed); how many.
        Maintenance: run at the local store's start and by ``cowork-backend purge``."""
        indexed = 0
        while True:
            records = self._repository.unindexed_artifacts(batch)
            progress = 0
            for listed in records:
                record, documents = self._stored_documents(listed)
                if self._repository.index_artifact(record, documents):
                    progress += 1
            indexed += progress
            if len(records) < batch or progress == 0:
                return indexed

    def _stored_documents(self, listed: ArtifactRecord) -> tuple[ArtifactRecord, Sequence[SearchDocument]]:
        """The record as stored now (a newer snapshot may have replaced the one listed) and the search
        documents of its content."""
        found = self._repository.get_artifact_content(
            listed.tenant_id, listed.workspace_id, listed.artifact_id
        )
        if found is None:
            return listed, []
        record, inline = found
        if inline is not None:
            data = inline
        else:
            content = self._content.open(record.content_key)
            if content is None:
                return record, []
            try:
                data = b"".join(content.chunks())
            finally:
                content.close()
        if record.artifact_type is not ArtifactType.SESSION_HISTORY:
            return record, _artifact_documents(record, data)
        try:
            return record, history_documents(SessionHistory.model_validate_json(data))
        except ValidationError:
            logger.warning("session_history %s does not parse; not indexed", record.artifact_id)
            return record, []

    # ------------------------------------------------------------------ maintenance

    def purge(self, now: datetime | None = None, *, batch: int = 200) -> PurgeReport:
        """Remove workspaces inactive for the configured period (90 days) with everything in them,
        artifact records whose workspace is gone, and content no record points at."""
        now = now or self._clock.now()
        cutoff = now - self._settings.workspace_inactivity
        workspaces = artifacts = 0
        while True:
            stale = self._repository.list_inactive(cutoff, batch)
            progress = 0
            for workspace in stale:
                removed = self._repository.delete(
                    workspace.tenant_id, workspace.workspace_id, inactive_before=cutoff
                )
                if removed is None:
                    continue  # a session used it again since it was listed: it stays
                self._content.delete_prefix(f"{workspace.workspace_id}/")
                progress += 1
                artifacts += len(removed)
                self._count_storage(workspace.tenant_id, -sum(r.size_bytes for r in removed))
                logger.info(
                    "purged inactive workspace %s (%d artifacts)", workspace.workspace_id, len(removed)
                )
            workspaces += progress
            if len(stale) < batch or progress == 0:
                break
        orphans = 0
        while True:
            found = self._repository.orphaned_artifacts(batch)
            for record in found:
                if not record.inline:
                    self._content.delete(record.content_key)
            self._repository.delete_artifacts(found)
            for record in found:
                self._count_storage(record.tenant_id, -record.size_bytes)
            orphans += len(found)
            if len(found) < batch:
                break
        swept = self._sweep_content(now)
        return PurgeReport(workspaces, artifacts, orphans, swept)

    def _sweep_content(self, now: datetime) -> int:
        swept = 0
        old_enough = now - self._settings.orphan_grace
        for stored in self._content.list():
            if stored.modified_at > old_enough:
                continue
            parts = stored.key.split("/")
            record = self._repository.find_artifact(parts[0], parts[1]) if len(parts) == 3 else None
            # Inline records keep their bytes in the repository: a file under their key is stray.
            if record is None or record.content_key != stored.key or record.inline:
                self._content.delete(stored.key)
                swept += 1
        return swept

    # ------------------------------------------------------------------ internals

    def _owned(self, principal: Principal, workspace_id: str) -> WorkspaceRecord:
        record = self._repository.get(principal.tenant_id, workspace_id)
        if record is None or record.user_id != principal.user_id:
            raise workspace_not_found(workspace_id)
        return record

    def _owned_artifact(self, principal: Principal, workspace_id: str, artifact_id: str) -> ArtifactRecord:
        self._owned(principal, workspace_id)
        record = self._repository.get_artifact(principal.tenant_id, workspace_id, artifact_id)
        if record is None or record.user_id != principal.user_id:
            raise artifact_not_found(artifact_id)
        return record

    def _owned_content(
        self, principal: Principal, workspace_id: str, artifact_id: str
    ) -> tuple[ArtifactRecord, bytes | None]:
        self._owned(principal, workspace_id)
        found = self._repository.get_artifact_content(principal.tenant_id, workspace_id, artifact_id)
        if found is None or found[0].user_id != principal.user_id:
            raise artifact_not_found(artifact_id)
        return found

    def _decode(self, text: str) -> bytes:
        limit = self._settings.limits.max_artifact_bytes
        if len(text) > (limit + 2) // 3 * 4:
            raise too_large(ErrorCode.FILE_TOO_LARGE, "The artifact", limit)
        try:
            data = decode_base64(text)
        except ValueError:
            raise invalid("contentBase64 must be valid base64", field="contentBase64") from None
        if len(data) > limit:
            raise too_large(ErrorCode.FILE_TOO_LARGE, "The artifact", limit)
        return data

    def _check_history(self, request: ArtifactUploadRequest, data: bytes) -> SessionHistory:
        try:
            history = SessionHistory.model_validate_json(data)
        except ValidationError as exc:
            first = exc.errors(include_url=False, include_input=False)[0]
            if first["type"] == "json_invalid":
                reason = str((first.get("ctx") or {}).get("error", ""))
                raise not_json(reason, "session_history content", field="contentBase64") from None
            shape = invalid_request(exc, prefix="contentBase64")
            raise BackendError(
                shape.code,
                f"session_history content: {shape.message}",
                status_code=400,
                details=shape.details,
            ) from None
        if history.session_id != request.session_id or history.workspace_id != request.workspace_id:
            raise invalid(
                "session_history content must be for the session and workspace it is uploaded to",
                field="contentBase64",
            )
        # The newest snapshot wins: one dated far ahead would supersede every later one for good.
        not_in_future(
            history.snapshot_at,
            self._clock.now(),
            self._settings.client_clock_skew,
            "contentBase64.snapshotAt",
        )
        return history

    @staticmethod
    def _artifact_id(
        principal: Principal, request: ArtifactUploadRequest, key: str | None, digest: str
    ) -> str:
        if request.artifact_type is ArtifactType.SESSION_HISTORY:
            return derived_id(
                "art", principal.tenant_id, request.workspace_id, request.session_id, "session_history"
            )
        if key is not None:
            return derived_id("art", principal.tenant_id, principal.user_id, request.workspace_id, "key", key)
        return derived_id(
            "art",
            principal.tenant_id,
            request.workspace_id,
            request.session_id,
            request.task_id or "",
            request.step_id or "",
            request.artifact_type.value,
            request.artifact_name,
            digest,
        )

    def _check_storage(self, record: ArtifactRecord, quotas: Quotas) -> None:
        """Refuse content the tenant's ``storageBytes`` has no room for: what the upload would add,
        which is nothing for a retry and the difference for a newer snapshot."""
        if quotas.limits(record.tenant_id).storage_bytes is None:
            return
        current = self._repository.get_artifact(record.tenant_id, record.workspace_id, record.artifact_id)
        if current is None:
            adding = record.size_bytes
        elif record.snapshot_at is not None and current.order_key < record.order_key:
            adding = record.size_bytes - current.size_bytes
        else:
            adding = 0  # a retry, or an older snapshot: nothing is stored
        quotas.check_storage(record.tenant_id, adding)

    def _count_storage(self, tenant_id: str, change: int) -> None:
        if self._quotas is not None:
            self._quotas.record_storage(tenant_id, change)

    def _write_content(self, record: ArtifactRecord, data: bytes) -> None:
        try:
            self._content.put(record.content_key, data, record.content_type)
        except StorageError:
            raise BackendError(
                ErrorCode.WORKSPACE_UPLOAD_FAILED,
                "The artifact could not be stored; retry",
                status_code=503,
                retryable=True,
                headers={"Retry-After": "1"},
            ) from None

    def _store_artifact(
        self, record: ArtifactRecord, data: bytes, documents: Sequence[SearchDocument]
    ) -> tuple[ArtifactRecord, Outcome]:
        if record.inline:
            # One conditional insert of metadata and bytes: a retry costs no more than a check first.
            existing = self._repository.put_artifact(record, data, documents=documents)
            if existing is None:
                return record, "created"
        else:
            existing = self._repository.get_artifact(
                record.tenant_id, record.workspace_id, record.artifact_id
            )
            if existing is None:
                self._write_content(record, data)
                existing = self._repository.put_artifact(record, documents=documents)
                if existing is None:
                    return record, "created"
                if existing.content_key != record.content_key or existing.inline:
                    self._content.delete(record.content_key)
        if existing.sha256 != record.sha256 or existing.session_id != record.session_id:
            raise BackendError(
                ErrorCode.INVALID_REQUEST,
                "This Idempotency-Key was already used for a different upload",
                status_code=409,
                details={"field": "Idempotency-Key", "artifactId": existing.artifact_id},
            )
        return existing, "unchanged"

    def _store_history(
        self, record: ArtifactRecord, data: bytes, documents: Sequence[SearchDocument]
    ) -> tuple[ArtifactRecord, Outcome]:
        current = self._repository.get_artifact(record.tenant_id, record.workspace_id, record.artifact_id)
        if current is not None and current.order_key >= record.order_key:
            return current, "unchanged" if current.order_key == record.order_key else "superseded"
        if record.inline:
            result = self._repository.put_history(record, data, documents=documents)
        else:
            self._write_content(record, data)
            result = self._repository.put_history(record, documents=documents)
            if not result.written and (
                result.stored.content_key != record.content_key or result.stored.inline
            ):
                self._content.delete(record.content_key)
        if not result.written:
            same = result.stored.order_key == record.order_key
            return result.stored, "unchanged" if same else "superseded"
        if result.replaced is None:
            self._count_storage(record.tenant_id, record.size_bytes)
            return result.stored, "created"
        replaced = result.replaced
        # Inline content went with the row it was in; a file is deleted unless the new record uses it.
        if not replaced.inline and (replaced.content_key != record.content_key or record.inline):
            self._content.delete(replaced.content_key)
        self._count_storage(record.tenant_id, record.size_bytes - replaced.size_bytes)
        return result.stored, "replaced"


def _artifact_documents(record: ArtifactRecord, data: bytes) -> list[SearchDocument]:
    return artifact_documents(
        artifact_id=record.artifact_id,
        session_id=record.session_id,
        task_id=record.task_id,
        name=record.artifact_name,
        content_type=record.content_type,
        at=record.created_at,
        data=data,
    )
