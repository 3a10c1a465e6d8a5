"""Approval Service routes (seed 000 §10.4)."""

# Annotations are not postponed here: FastAPI reads them at run time.
from typing import Annotated

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from backend.approval.service import ApprovalService
from backend.common.body import read_json
from backend.common.openapi import alternative, body_spec, error_responses
from backend.common.responses import json_response
from backend.common.runner import Runner
from backend.common.security import Authenticator, caller_of
from contracts.approvals import ApprovalDecisionRecord
from contracts.rest.approvals import ApprovalList, ApprovalResource

__all__ = ["BODY_MODELS", "router"]

BODY_MODELS = (ApprovalDecisionRecord,)


def router(service: ApprovalService, authenticate: Authenticator, runner: Runner, max_body: int) -> APIRouter:
    api = APIRouter(tags=["approvals"], route_class=authenticate.route_class)

    @api.post(
        "/approvals",
        response_model=ApprovalResource,
        status_code=201,
        responses={
            **error_responses(400, 401, 404, 409, 413, 415),
            200: alternative(ApprovalResource, "Already recorded (a retry)"),
        },
        summary="Persist an approval decision (idempotent on approvalId)",
        openapi_extra=body_spec(ApprovalDecisionRecord),
    )
    async def record(request: Request) -> Response:
        body = await read_json(request, ApprovalDecisionRecord, max_body)
        stored, created = await runner(service.record, caller_of(request), body)
        return json_response(stored, status_code=201 if created else 200)

    @api.get(
        "/approvals",
        response_model=ApprovalList,
        responses=error_responses(400, 401, 404),
        summary="A session's approval decisions",
    )
    async def list_approvals(
        request: Request, session_id: Annotated[str, Query(alias="sessionId", min_length=1, max_length=128)]
    ) -> Response:
        return json_response(await runner(service.list, caller_of(request), session_id))

    return api
