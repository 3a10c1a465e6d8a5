"""Policy Service routes: ``GET /policy/keys`` (public) and ``POST /policy/bundles``."""

# Annotations are not postponed here: FastAPI reads them at run time, and they name locals of
# the router function (its dependencies).
from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.responses import Response

from backend.common.auth import Principal
from backend.common.body import json_body
from backend.common.openapi import body_spec, error_responses
from backend.common.responses import json_response
from backend.common.runner import Runner
from backend.common.security import Authenticator
from backend.policy.service import PolicyService
from contracts.rest.policies import IssueBundleRequest, IssuedBundle, PolicyKeySet

__all__ = ["BODY_MODELS", "router"]

BODY_MODELS = (IssueBundleRequest,)


def router(service: PolicyService, authenticate: Authenticator, runner: Runner, max_body: int) -> APIRouter:
    api = APIRouter(tags=["policy"])
    Caller = Annotated[Principal, Depends(authenticate)]

    @api.get(
        "/policy/keys",
        response_model=PolicyKeySet,
        summary="The public keys that verify policy bundle signatures",
        openapi_extra={"security": []},
    )
    async def keys() -> Response:
        return json_response(service.key_set(), headers={"Cache-Control": "public, max-age=300"})

    @api.post(
        "/policy/bundles",
        response_model=IssuedBundle,
        responses=error_responses(400, 401, 413, 415, 500),
        summary="Issue a signed policy bundle for one of the caller's sessions",
        openapi_extra=body_spec(IssueBundleRequest),
    )
    async def issue(
        caller: Caller, body: Annotated[IssueBundleRequest, Depends(json_body(IssueBundleRequest, max_body))]
    ) -> Response:
        issued = await runner(
            service.issue, caller, body.session_id, body.workspace_paths, body.supported_capabilities
        )
        return json_response(issued)

    return api
