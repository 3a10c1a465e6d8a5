"""Policy Service routes: ``GET /policy/keys`` (public) and ``POST /policy/bundles``."""

from fastapi import APIRouter, Request
from fastapi.routing import APIRoute
from starlette.responses import Response

from backend.common.body import read_json
from backend.common.openapi import body_spec, error_responses
from backend.common.responses import json_response
from backend.common.runner import Runner
from backend.common.security import Authenticator, caller_of
from backend.policy.service import PolicyService
from contracts.rest.policies import IssueBundleRequest, IssuedBundle, PolicyKeySet

__all__ = ["BODY_MODELS", "router"]

BODY_MODELS = (IssueBundleRequest,)


def router(service: PolicyService, authenticate: Authenticator, runner: Runner, max_body: int) -> APIRouter:
    api = APIRouter(tags=["policy"], route_class=authenticate.route_class)

    async def keys() -> Response:
        return json_response(service.key_set(), headers={"Cache-Control": "public, max-age=300"})

    # Public: anyone verifying a bundle needs these keys, and they are public keys.
    api.add_api_route(
        "/policy/keys",
        keys,
        methods=["GET"],
        response_model=PolicyKeySet,
        summary="The public keys that verify policy bundle signatures",
        openapi_extra={"security": []},
        route_class_override=APIRoute,
    )

    @api.post(
        "/policy/bundles",
        response_model=IssuedBundle,
        responses=error_responses(400, 401, 413, 415, 500),
        summary="Issue a signed policy bundle for one of the caller's sessions",
        openapi_extra=body_spec(IssueBundleRequest),
    )
    async def issue(request: Request) -> Response:
        body = await read_json(request, IssueBundleRequest, max_body)
        issued = await runner(
            service.issue,
            caller_of(request),
            body.session_id,
            body.workspace_paths,
            body.supported_capabilities,
        )
        return json_response(issued)

    return api
