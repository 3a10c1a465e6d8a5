"""Audit Service routes: ``POST /audit/events`` only — the log is append-only by construction, with no
route that updates or deletes a record (any other method answers 405)."""

from fastapi import APIRouter, Request
from starlette.responses import Response

from backend.audit.service import AuditService
from backend.common.body import read_one_or_many
from backend.common.openapi import body_spec, error_responses
from backend.common.responses import json_response
from backend.common.runner import Runner
from backend.common.security import Authenticator, caller_of
from backend.common.settings import Limits
from contracts.events import EventEnvelope
from contracts.rest.observability import AuditReceipts

__all__ = ["BODY_MODELS", "router"]

BODY_MODELS = (EventEnvelope,)


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
        events = await read_one_or_many(
            request,
            EventEnvelope,
            limits.max_json_body_bytes,
            limits.max_events_per_batch,
            limits.max_event_bytes,
        )
        return json_response(await runner(service.append, caller_of(request), events), status_code=201)

    return api
