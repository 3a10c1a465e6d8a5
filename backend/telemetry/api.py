"""Telemetry Service route: ``POST /telemetry/events`` (one envelope or a batch)."""

from fastapi import APIRouter, Request
from starlette.responses import Response

from backend.common.body import read_events
from backend.common.openapi import body_spec, error_responses
from backend.common.responses import json_response
from backend.common.runner import Runner
from backend.common.security import Authenticator, caller_of
from backend.common.settings import Limits
from backend.telemetry.service import TelemetryService
from contracts.events import EventEnvelope
from contracts.rest.observability import TelemetryReceipt

__all__ = ["BODY_MODELS", "router"]

BODY_MODELS = (EventEnvelope,)


def router(
    service: TelemetryService, authenticate: Authenticator, runner: Runner, limits: Limits
) -> APIRouter:
    api = APIRouter(tags=["telemetry"], route_class=authenticate.route_class)

    @api.post(
        "/telemetry/events",
        response_model=TelemetryReceipt,
        status_code=202,
        responses=error_responses(400, 401, 403, 413, 415),
        summary="Record operational events (one envelope or a batch)",
        openapi_extra=body_spec(EventEnvelope, array_of=EventEnvelope),
    )
    async def ingest(request: Request) -> Response:
        events = await read_events(request, limits)
        return json_response(await runner(service.ingest, caller_of(request), events), status_code=202)

    return api
