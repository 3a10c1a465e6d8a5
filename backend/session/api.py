"""Session Service routes (seed 001 §4.1, §4.4; seed 000 §3.2, §3.4, §9.5)."""

# Annotations are not postponed here: FastAPI reads them at run time.
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from starlette.responses import Response

from backend.common.body import read_json
from backend.common.openapi import alternative, body_spec, error_responses
from backend.common.responses import json_response
from backend.common.runner import Runner
from backend.common.security import Authenticator, caller_of
from backend.session.service import SessionService
from contracts.rest.sessions import (
    CancelSessionRequest,
    CreateSessionRequest,
    CreateSessionResponse,
    ResumeSessionRequest,
    ResumeSessionResponse,
    SessionList,
    SessionResource,
)

__all__ = ["BODY_MODELS", "router"]

BODY_MODELS = (CreateSessionRequest, ResumeSessionRequest, CancelSessionRequest)

SessionId = Annotated[str, Path(min_length=1, max_length=128, description="The session's ID")]


def _errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    return error_responses(400, 401, 413, 415, *codes)


def router(service: SessionService, authenticate: Authenticator, runner: Runner, max_body: int) -> APIRouter:
    api = APIRouter(tags=["sessions"], route_class=authenticate.route_class)

    @api.post(
        "/sessions",
        response_model=CreateSessionResponse,
        status_code=201,
        responses={
            **_errors(429, 500),
            200: alternative(CreateSessionResponse, "Incompatible client: a verdict and no session"),
        },
        summary="Start a session: compatibility check, workspace, signed policy bundle",
        openapi_extra=body_spec(CreateSessionRequest),
    )
    async def create(request: Request) -> Response:
        body = await read_json(request, CreateSessionRequest, max_body)
        created = await runner(service.create, caller_of(request), body)
        return json_response(created, status_code=201 if created.session_id is not None else 200)

    @api.get(
        "/sessions",
        response_model=SessionList,
        responses=_errors(),
        summary="The caller's sessions in a workspace, newest first",
    )
    async def list_sessions(
        request: Request,
        workspace_id: Annotated[str, Query(alias="workspaceId", min_length=1, max_length=128)],
        limit: Annotated[int, Query(ge=1, le=200)] = 50,
    ) -> Response:
        return json_response(await runner(service.list, caller_of(request), workspace_id, limit))

    @api.get(
        "/sessions/{session_id}",
        response_model=SessionResource,
        responses=_errors(404),
        summary="A session's status, expiry and policy version",
    )
    async def get(request: Request, session_id: SessionId) -> Response:
        return json_response(await runner(service.get, caller_of(request), session_id))

    @api.post(
        "/sessions/{session_id}/resume",
        response_model=ResumeSessionResponse,
        responses=_errors(404, 409, 410, 429),
        summary="Resume after a crash or a policy expiry: a refreshed, re-signed bundle",
        openapi_extra=body_spec(ResumeSessionRequest, required=False),
    )
    async def resume(request: Request, session_id: SessionId) -> Response:
        body = await read_json(request, ResumeSessionRequest, max_body, empty_ok=True)
        return json_response(await runner(service.resume, caller_of(request), session_id, body))

    @api.post(
        "/sessions/{session_id}/cancel",
        response_model=SessionResource,
        responses=_errors(404, 409),
        summary="End a session (idempotent)",
        openapi_extra=body_spec(CancelSessionRequest, required=False),
    )
    async def cancel(request: Request, session_id: SessionId) -> Response:
        body = await read_json(request, CancelSessionRequest, max_body, empty_ok=True)
        return json_response(await runner(service.cancel, caller_of(request), session_id, body))

    return api
