"""Workspace Service routes: workspaces, artifacts and search (seed 004; seed 000 §7.5)."""

# Annotations are not postponed here: FastAPI reads them at run time.
from collections.abc import Iterator
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Header, Path, Query, Request
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response, StreamingResponse

from backend.common.auth import Principal
from backend.common.body import UploadBudget, parse_json, read_body, read_json
from backend.common.openapi import alternative, body_spec, error_responses
from backend.common.responses import json_response
from backend.common.runner import Runner
from backend.common.security import Authenticator, caller_of
from backend.common.settings import Limits
from backend.workspace.records import ArtifactRecord
from backend.workspace.repository import BytesContent, Content
from backend.workspace.search import is_text_type
from backend.workspace.service import WorkspaceService
from contracts.enums import ArtifactType
from contracts.errors import ErrorCode
from contracts.rest.workspaces import (
    ArtifactList,
    ArtifactMetadata,
    ArtifactUploadRequest,
    ArtifactUploadResponse,
    ResolveWorkspaceRequest,
    WorkspaceList,
    WorkspaceResource,
    WorkspaceSearchResult,
)

__all__ = ["BODY_MODELS", "router"]

BODY_MODELS = (ResolveWorkspaceRequest, ArtifactUploadRequest)

WorkspaceId = Annotated[str, Path(min_length=1, max_length=128)]
ArtifactId = Annotated[str, Path(min_length=1, max_length=128)]
SessionId = Annotated[str, Path(min_length=1, max_length=128)]


def _errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    return error_responses(400, 401, 404, *codes)


def _upload(
    service: WorkspaceService, caller: Principal, workspace_id: str, raw: bytes, idempotency_key: str | None
) -> tuple[ArtifactUploadResponse, bool]:
    return service.upload(caller, workspace_id, parse_json(ArtifactUploadRequest, raw), idempotency_key)


_SMALL_CONTENT = 1024 * 1024
_ON_LOOP_CONTENT = 256 * 1024
"""The largest inline content an upload handles on the event loop (about 1.5 ms of work)."""


_ON_LOOP_TEXT_BASE64 = 16 * 1024 // 3 * 4
"""Text content larger than 16 KiB (in base64) is indexed for search off the event loop."""


def _costly_to_index(request: ArtifactUploadRequest) -> bool:
    """Whether storing this upload indexes enough text to belong off the event loop. A history
    snapshot is indexed incrementally (only messages new since the last one), so it stays."""
    return (
        request.artifact_type is not ArtifactType.SESSION_HISTORY
        and len(request.content_base64) > _ON_LOOP_TEXT_BASE64
        and is_text_type(request.content_type)
    )


def _read_small(content: Content) -> Content | bytes:
    """Small content read whole (one response body); larger content left open to be streamed."""
    if isinstance(content, BytesContent):
        return content.data
    if content.size > _SMALL_CONTENT:
        return content
    try:
        return b"".join(content.chunks())
    finally:
        content.close()


def _open(
    service: WorkspaceService, caller: Principal, workspace_id: str, artifact_id: str
) -> tuple[ArtifactRecord, Content | bytes]:
    """Lookups and small content's bytes in one go, in one worker thread (for a blocking store)."""
    record, content = service.open_content(caller, workspace_id, artifact_id)
    return record, _read_small(content)


def _streamed(content: Content) -> Iterator[bytes]:
    try:
        yield from content.chunks()
    finally:
        content.close()


def router(
    service: WorkspaceService,
    authenticate: Authenticator,
    runner: Runner,
    limits: Limits,
) -> APIRouter:
    api = APIRouter(tags=["workspaces"], route_class=authenticate.route_class)
    budget = UploadBudget(limits.upload_budget_bytes)
    upload_limit = limits.max_upload_body_bytes
    # An upload whose content a non-blocking store keeps inline is parsed, decoded, hashed and written
    # right here, on the event loop: about 0.5 ms of work for 64 KiB, 1.5 ms for 256 KiB. In a worker
    # thread the same 64 KiB upload cost 1 ms more CPU, the event loop and the thread taking turns at
    # the GIL, and throughput fell from about 800 to 460 uploads/s. A body this small cannot hold more
    # content than the store keeps inline (base64 takes 4 characters for 3 bytes); larger ones, whose
    # content may go to fsynced files, are handled in a worker thread.
    on_loop_body_bytes = min(service.inline_content_limit, _ON_LOOP_CONTENT) // 3 * 4 if runner.inline else 0

    @api.post(
        "/workspaces",
        response_model=WorkspaceResource,
        responses=_errors(413, 415),
        summary="Resolve the caller's workspace: the project's (local) or a fresh one (general)",
        openapi_extra=body_spec(ResolveWorkspaceRequest),
    )
    async def resolve(request: Request) -> Response:
        body = await read_json(request, ResolveWorkspaceRequest, limits.max_json_body_bytes)
        resource = await runner(
            service.resolve, caller_of(request), body.workspace_scope, body.local_paths or []
        )
        return json_response(resource)

    @api.get(
        "/workspaces", response_model=WorkspaceList, responses=_errors(), summary="The caller's workspaces"
    )
    async def list_workspaces(request: Request) -> Response:
        return json_response(await runner(service.list, caller_of(request)))

    @api.get(
        "/workspaces/{workspace_id}",
        response_model=WorkspaceResource,
        responses=_errors(),
        summary="A workspace",
    )
    async def get(request: Request, workspace_id: WorkspaceId) -> Response:
        return json_response(await runner(service.get, caller_of(request), workspace_id))

    @api.delete(
        "/workspaces/{workspace_id}",
        status_code=204,
        responses=_errors(),
        summary="Delete a workspace: every artifact and history is permanently removed",
    )
    async def delete(request: Request, workspace_id: WorkspaceId) -> Response:
        await run_in_threadpool(service.delete, caller_of(request), workspace_id)
        return Response(status_code=204)

    @api.delete(
        "/workspaces/{workspace_id}/sessions/{session_id}",
        status_code=204,
        responses=_errors(),
        summary="Delete a conversation: the session's history and artifacts are permanently removed",
    )
    async def delete_session(request: Request, workspace_id: WorkspaceId, session_id: SessionId) -> Response:
        await run_in_threadpool(service.delete_session, caller_of(request), workspace_id, session_id)
        return Response(status_code=204)

    @api.post(
        "/workspaces/{workspace_id}/artifacts",
        response_model=ArtifactUploadResponse,
        status_code=201,
        responses={
            **_errors(409, 413, 415, 429, 503),
            200: alternative(ArtifactUploadResponse, "A retry or an older snapshot: nothing new stored"),
        },
        summary="Upload an artifact (or the session's session_history snapshot)",
        openapi_extra=body_spec(ArtifactUploadRequest),
    )
    async def upload(
        request: Request,
        workspace_id: WorkspaceId,
        idempotency_key: Annotated[str | None, Header(alias="Idempotency-Key", max_length=255)] = None,
    ) -> Response:
        caller = caller_of(request)
        declared = request.headers.get("content-length", "")
        reserve = int(declared) if declared.isdigit() else upload_limit
        async with budget.reserve(min(reserve, upload_limit)):
            raw = await read_body(request, upload_limit, too_large_code=ErrorCode.FILE_TOO_LARGE)
            if len(raw) <= on_loop_body_bytes:
                parsed = parse_json(ArtifactUploadRequest, raw)
                if _costly_to_index(parsed):
                    # Full-text indexing costs about 0.5 µs a word (6 ms for 64 KiB of prose), in
                    # SQLite, which lets go of the interpreter lock: in a worker thread it runs beside
                    # the event loop instead of holding up every other request.
                    stored, created = await run_in_threadpool(
                        service.upload, caller, workspace_id, parsed, idempotency_key
                    )
                else:
                    stored, created = service.upload(caller, workspace_id, parsed, idempotency_key)
            else:
                # Parsing, decoding and hashing up to 32 MiB, and writing it, all stay off the event loop.
                stored, created = await run_in_threadpool(
                    _upload, service, caller, workspace_id, raw, idempotency_key
                )
        location = f"/workspaces/{workspace_id}/artifacts/{stored.artifact_id}"
        return json_response(stored, status_code=201 if created else 200, headers={"Location": location})

    @api.get(
        "/workspaces/{workspace_id}/artifacts",
        response_model=ArtifactList,
        responses=_errors(),
        summary="The workspace's artifacts, filtered by session, task and type",
    )
    async def list_artifacts(
        request: Request,
        workspace_id: WorkspaceId,
        session_id: Annotated[str | None, Query(alias="sessionId", max_length=128)] = None,
        task_id: Annotated[str | None, Query(alias="taskId", max_length=128)] = None,
        artifact_type: Annotated[ArtifactType | None, Query(alias="artifactType")] = None,
    ) -> Response:
        found = await runner(
            service.list_artifacts, caller_of(request), workspace_id, session_id, task_id, artifact_type
        )
        return json_response(found)

    @api.get(
        "/workspaces/{workspace_id}/search",
        response_model=WorkspaceSearchResult,
        responses=_errors(503),
        summary="Full-text search over the workspace's conversations and text artifacts, best first",
    )
    async def search(
        request: Request,
        workspace_id: WorkspaceId,
        query: Annotated[str, Query(min_length=1, max_length=500)],
        limit: Annotated[int, Query(ge=1, le=50)] = 10,
        session_id: Annotated[str | None, Query(alias="sessionId", min_length=1, max_length=128)] = None,
    ) -> Response:
        found = await runner(
            service.search, caller_of(request), workspace_id, query, limit=limit, session_id=session_id
        )
        return json_response(found)

    @api.get(
        "/workspaces/{workspace_id}/artifacts/{artifact_id}",
        response_model=ArtifactMetadata,
        responses=_errors(),
        summary="An artifact's metadata",
    )
    async def get_artifact(request: Request, workspace_id: WorkspaceId, artifact_id: ArtifactId) -> Response:
        return json_response(
            await runner(service.get_artifact, caller_of(request), workspace_id, artifact_id)
        )

    @api.get(
        "/workspaces/{workspace_id}/artifacts/{artifact_id}/content",
        response_class=StreamingResponse,
        responses={
            **_errors(503),
            200: {"content": {"application/octet-stream": {}}, "description": "The bytes"},
        },
        summary="An artifact's content, streamed with its content type",
    )
    async def content(request: Request, workspace_id: WorkspaceId, artifact_id: ArtifactId) -> Response:
        caller = caller_of(request)
        content: Content | bytes
        if runner.inline:
            # The lookups are a non-blocking store's, and inline content comes with them; only reading
            # a file needs a worker thread.
            record, opened = service.open_content(caller, workspace_id, artifact_id)
            if isinstance(opened, BytesContent):
                content = opened.data
            elif opened.size > _SMALL_CONTENT:
                content = opened
            else:
                content = await run_in_threadpool(_read_small, opened)
        else:
            record, content = await run_in_threadpool(_open, service, caller, workspace_id, artifact_id)
        size = len(content) if isinstance(content, bytes) else content.size
        headers = {
            "Content-Length": str(size),
            "ETag": f'"{record.sha256}"',
            # Served as a download and never interpreted: an artifact may be HTML or script the agent
            # produced, and this origin also holds the user's token-bearing API.
            "Content-Disposition": f"attachment; filename*=UTF-8''{quote(record.artifact_name, safe='')}",
            "X-Content-Type-Options": "nosniff",
            "Content-Security-Policy": "sandbox; default-src 'none'",
            "Cache-Control": "private, no-store",
        }
        if isinstance(content, bytes):
            return Response(content, media_type=record.content_type, headers=headers)
        return StreamingResponse(
            _streamed(content),
            media_type=record.content_type,
            headers=headers,
            background=BackgroundTask(content.close),
        )

    return api
