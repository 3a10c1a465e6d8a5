"""Audit Service routes: ``POST /audit/events`` to append, and the operators' read side —
``GET /audit/events`` and ``GET /audit/verify``, for the tenant's administrators. The log is
append-only by construction: no route updates or deletes a record (any other method answers 405)."""

# Annotations are not postponed here: FastAPI reads them at run time.
from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from backend.audit.repository import AuditFilter
from backend.audit.service import AuditService
from backend.common.body import read_events
from backend.common.openapi import body_spec, error_responses
from backend.common.responses import json_response
from backend.common.runner import Runner
from backend.common.security import Authenticator, caller_of
from backend.common.settings import Limits
from contracts._base import UtcDatetime
from contracts.events import EventEnvelope, EventType
from contracts.rest.observability import AuditEventPage, AuditReceipts, AuditVerification

__all__ = ["BODY_MODELS", "MAX_PAGE", "router"]

BODY_MODELS = (EventEnvelope,)
MAX_PAGE = 500


def router(service: AuditService, authenticate: Authenticator, runner: Runner, limits: Limits) -> APIRouter:
    api = APIRouter(tags=["audit"], route_class=authenticate.route_class)

    @api.post(
        "/audit/events",
        response_model=AuditReceipts,
        status_code=201,
        responses=error_responses(400, 401, 403, 413, 415, 503),
        summary="Append events to the tenant's hash-chained audit log (one envelope or a batch)",
        openapi_extra=body_spec(EventEnvelope, array_of=EventEnvelope),
    )
    async def append(request: Request) -> Response:
        events = await read_events(request, limits)
        return json_response(await runner(service.append, caller_of(request), events), status_code=201)

    @api.get(
        "/audit/events",
        response_model=AuditEventPage,
        responses=error_responses(400, 401, 403, 503),
        summary="The tenant's audit records, filtered and paged (administrators)",
    )
    async def events(
        request: Request,
        workspace_id: Annotated[str | None, Query(alias="workspaceId", min_length=1, max_length=256)] = None,
        session_id: Annotated[str | None, Query(alias="sessionId", min_length=1, max_length=256)] = None,
        user_id: Annotated[str | None, Query(alias="userId", min_length=1, max_length=256)] = None,
        event_type: Annotated[
            list[EventType] | None, Query(alias="eventType", description="Repeatable: any of these types")
        ] = None,
        since: Annotated[UtcDatetime | None, Query(description="The event's timestamp at or after")] = None,
        until: Annotated[UtcDatetime | None, Query(description="The event's timestamp before")] = None,
        limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 100,
        order: Annotated[
            Literal["asc", "desc"] | None, Query(description="Default desc: newest first")
        ] = None,
        cursor: Annotated[str | None, Query(min_length=1, max_length=512)] = None,
    ) -> Response:
        where = AuditFilter(
            workspace_id=workspace_id,
            session_id=session_id,
            user_id=user_id,
            event_types=frozenset(t.value for t in event_type or ()),
            since=since,
            until=until,
        )
        # In a worker thread whatever the store: a rare filter can make a query look at many records.
        page = await run_in_threadpool(
            service.events, caller_of(request), where, limit=limit, order=order, cursor=cursor
        )
        return json_response(page)

    @api.get(
        "/audit/verify",
        response_model=AuditVerification,
        responses=error_responses(401, 403, 503),
        summary="Check the tenant's hash chain; the first broken link named (administrators)",
    )
    async def verify(request: Request) -> Response:
        # The whole chain is read and hashed: never on the event loop.
        return json_response(await run_in_threadpool(service.verify_for, caller_of(request)))

    return api
