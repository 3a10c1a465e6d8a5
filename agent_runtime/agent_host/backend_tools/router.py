"""``BackendToolRouter``: the ``ToolRouter`` of the Backend Tool Service's tools (seed 000 §7.6).

The dispatch hands it a call the policy allowed (``BackendTool.Invoke``, the grant's allowlist, the
approvals) under the 120 s budget of §7.4; it sends the call to ``POST /tools/{toolName}/invoke`` and
returns the service's ``ToolResult`` — processed by the loop exactly like a local tool's, artifacts
included. Whatever goes wrong on the way is a result too, never an exception (the ``ToolRouter``
contract), worded for the model:

* the service refused the call (4xx): its own code and message — ``INVALID_REQUEST`` names the argument,
  ``CAPABILITY_DENIED`` (the tenant's policy withdrew the tool since the session started) is ``denied``;
* the service could not be reached or answered off-contract: ``failed``, ``TOOL_EXECUTION_FAILED`` (or
  ``TOOL_EXECUTION_TIMEOUT``), saying the remote tool is unavailable now — the task goes on.

Not sent twice: a remote tool may act (a fetch is a request to someone's server), so the client retries
only a call that provably never left (``invoke_backend_tool``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Protocol

from pydantic import ValidationError

from agent_runtime.agent_host.services import REMOTE_TOOL_TIMEOUT_S, BackendRejected, BackendUnreachable
from contracts.enums import ToolStatus
from contracts.errors import CoworkError, ErrorCode
from contracts.rest.tools import InvokeToolRequest
from contracts.tools import ReadScope, ToolArtifact, ToolDefinition, ToolError, ToolRequest, ToolResult
from contracts.urls import RedirectCheck
from contracts.validation import invalid_request

__all__ = ["BackendToolClient", "BackendToolRouter"]

logger = logging.getLogger(__name__)


class BackendToolClient(Protocol):
    """The Backend Tool Service as the runtime reaches it: ``services.BackendClient`` is one."""

    async def list_backend_tools(self) -> list[ToolDefinition]: ...

    async def invoke_backend_tool(
        self, tool_name: str, request: InvokeToolRequest, *, timeout_s: float = ...
    ) -> ToolResult: ...


class BackendToolRouter:
    """Routes the remote tools ``tools`` (as discovered) to ``client``."""

    def __init__(
        self,
        client: BackendToolClient,
        tools: Sequence[ToolDefinition],
        *,
        timeout_s: float = REMOTE_TOOL_TIMEOUT_S,
    ) -> None:
        self._client = client
        self._tools = list(tools)
        self._names = frozenset(tool.tool_name for tool in self._tools)
        self._timeout_s = timeout_s

    def get_available_tools(self) -> list[ToolDefinition]:
        return list(self._tools)

    async def execute(
        self,
        request: ToolRequest,
        *,
        check_redirect: RedirectCheck | None = None,
        read_scope: ReadScope | None = None,
    ) -> ToolResult:
        name = request.tool_name
        if name not in self._names:
            return _outcome(
                request, ToolStatus.FAILED, ErrorCode.TOOL_NOT_FOUND, f"Unknown remote tool: {name}"
            )
        try:
            body = InvokeToolRequest(
                session_id=request.session_id,
                task_id=request.task_id,
                step_id=request.step_id,
                tool_call_id=request.tool_call_id,
                arguments=dict(request.arguments),
            )
        except ValidationError as exc:
            message = f"{name} cannot be sent to the Backend Tool Service: {invalid_request(exc).message}"
            return _outcome(request, ToolStatus.FAILED, ErrorCode.INVALID_REQUEST, message)
        try:
            result = await self._client.invoke_backend_tool(name, body, timeout_s=self._timeout_s)
        except BackendRejected as exc:
            status = ToolStatus.DENIED if exc.code is ErrorCode.CAPABILITY_DENIED else ToolStatus.FAILED
            return _outcome(
                request, status, exc.code, f"The Backend Tool Service refused {name}: {exc.message}"
            )
        except BackendUnreachable as exc:
            timed_out = exc.shape.details.get("failure") == "timeout"
            code = ErrorCode.TOOL_EXECUTION_TIMEOUT if timed_out else ErrorCode.TOOL_EXECUTION_FAILED
            message = f"The remote tool {name} is not available now ({exc.message}); try again later."
            return _outcome(request, ToolStatus.FAILED, code, message)
        except CoworkError as exc:
            # An answer off the contract (logged by the client's caller here, with its code): the tool's
            # outcome is unknown, so the model is told that rather than anything it could misread.
            logger.warning("the Backend Tool Service answered %s off-contract: %s", name, exc.shape.message)
            message = f"The remote tool {name} gave an answer this runtime cannot use ({exc.shape.message})."
            return _outcome(request, ToolStatus.FAILED, ErrorCode.TOOL_EXECUTION_FAILED, message)
        if result.tool_call_id is None and request.tool_call_id is not None:
            result = result.model_copy(update={"tool_call_id": request.tool_call_id})
        return result

    def release_artifacts(self, artifacts: Sequence[ToolArtifact]) -> None:
        """Nothing to release: a remote tool's artifacts carry their text inline, no spooled file."""

    async def aclose(self) -> None:
        """Nothing to stop: each call is one HTTP request of the session's backend client."""


def _outcome(request: ToolRequest, status: ToolStatus, code: ErrorCode, message: str) -> ToolResult:
    return ToolResult.answering(request, status, error=ToolError(code=code, message=message))
