"""Approval Service routes (seed 000 §10.4)."""

# Annotations are not postponed here: FastAPI reads them at run time, and they name locals of
# the router function (its dependencies).
from typing import Annotated

from fastapi import APIRouter, Depends, Query
from starlette.responses import Response

from backend.approval.service import ApprovalService
from backend.common.auth import Principal
from backend.common.body import json_body
from backend.common.openapi import alternative, body_spec, error_responses
from backend.common.responses import json_response
from backend.common.runner import Runner
from backend.common.security import Authenticator
from contracts.approvals import ApprovalDecisionRecord
from contracts.rest.approvals import ApprovalList, ApprovalResource

__all__ = ["BODY_MODELS", "router"]

BODY_MODELS = (ApprovalDecisionRecord,)


def router(service: ApprovalService, authenticate: Authenticator, runner: Runner, max_body: int) -> APIRouter:
    api = APIRouter(tags=["approvals"])
    Caller = Annotated[Principal, Depends(authenticate)]

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
    async def record(
        caller: Caller,
        body: Annotated[ApprovalDecisionRecord, Depends(json_body(ApprovalDecisionRecord, max_body))],
    ) -> Response:
        stored, created = await runner(service.record, caller, body)
        return json_response(stored, status_code=201 if created else 200)

    @api.get(
        "/approvals",
        response_model=ApprovalList,
        responses=error_responses(400, 401, 404),
        summary="A session's approval decisions",
    )
    async def list_approvals(
        caller: Caller, session_id: Annotated[str, Query(alias="sessionId", min_length=1, max_length=128)]
    ) -> Response:
        return json_response(await runner(service.list, caller, session_id))

    return api
