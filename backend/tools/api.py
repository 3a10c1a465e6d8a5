"""Backend Tool Service routes: ``GET /tools`` and ``POST /tools/{toolName}/invoke``."""

# Annotations are not postponed here: FastAPI reads them at run time.
from typing import Annotated

from fastapi import APIRouter, Path, Request
from starlette.responses import Response

from backend.common.body import read_json
from backend.common.openapi import body_spec, error_responses
from backend.common.responses import json_response
from backend.common.security import Authenticator, caller_of
from backend.tools.service import ToolService
from contracts.rest.tools import BackendToolList, InvokeToolRequest
from contracts.tools import ToolResult

__all__ = ["BODY_MODELS", "router"]

BODY_MODELS = (InvokeToolRequest,)

ToolNamePath = Annotated[str, Path(min_length=1, max_length=128)]


def router(service: ToolService, authenticate: Authenticator, max_body: int) -> APIRouter:
    api = APIRouter(tags=["tools"], route_class=authenticate.route_class)

    @api.get(
        "/tools",
        response_model=BackendToolList,
        responses=error_responses(401, 500),
        summary="The backend tools this tenant's policy allows (BackendTool.Invoke allowedToolNames)",
    )
    async def list_tools(request: Request) -> Response:
        return json_response(service.tools(caller_of(request)))

    @api.post(
        "/tools/{tool_name}/invoke",
        response_model=ToolResult,
        responses=error_responses(400, 401, 403, 404, 413, 415, 500, 503),
        summary="Run a backend tool for one of the caller's sessions; the answer is a ToolResult",
        openapi_extra=body_spec(InvokeToolRequest),
    )
    async def invoke(request: Request, tool_name: ToolNamePath) -> Response:
        body = await read_json(request, InvokeToolRequest, max_body)
        return json_response(await service.invoke(caller_of(request), tool_name, body))

    return api
