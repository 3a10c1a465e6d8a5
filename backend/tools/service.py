"""The Backend Tool Service: remote tools for what the desktop cannot do locally (seed 001 §1, §5;
seed 000 §7.4, §7.6).

A call is checked in this order — each refusal an HTTP error in the seed's shape, before any work:
the tool exists (404 ``TOOL_NOT_FOUND``), the caller's tenant policy allows it (its ``BackendTool.Invoke``
grant's ``allowedToolNames``; 403 ``CAPABILITY_DENIED``), the arguments fit the tool's input schema (400
``INVALID_REQUEST`` naming ``arguments.<field>``), and the session is the caller's (404
``SESSION_NOT_FOUND``; its workspace is where the tool works). Then the tool runs within the budget of
§7.4 (120 s, enforced here whatever the client waits) and the answer is a standard ``ToolResult``:
``succeeded``, or ``failed`` with the reason (``TOOL_EXECUTION_TIMEOUT`` past the budget).

The policy is read per call from the tenant's current policy, not from the session's bundle, so a
tool an administrator withdraws is refused from the next call on.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from pydantic import ValidationError

from backend.common.auth import Principal
from backend.common.errors import BackendError, session_not_found
from backend.common.runner import Runner
from backend.tools.base import BackendTool, ToolCall, ToolFailed, ToolOutput
from backend.tools.ports import SessionDirectory, ToolAllowlist
from contracts._base import WireModel
from contracts.enums import Capability, ToolStatus
from contracts.errors import ErrorCode
from contracts.rest.tools import BackendToolList, InvokeToolRequest
from contracts.tools import ToolError, ToolResult
from contracts.validation import invalid_request, validate_json_value

__all__ = ["DEFAULT_TOOL_TIMEOUT", "ToolService"]

logger = logging.getLogger(__name__)

DEFAULT_TOOL_TIMEOUT = timedelta(seconds=120)
"""Seed 000 §7.4: remote tools, 120 seconds including the round trip."""


class ToolService:
    def __init__(
        self,
        tools: Sequence[BackendTool[Any]],
        allowlist: ToolAllowlist,
        sessions: SessionDirectory,
        runner: Runner,
        *,
        timeout: timedelta = DEFAULT_TOOL_TIMEOUT,
    ) -> None:
        self._tools = {tool.name: tool for tool in tools}
        self._allowlist = allowlist
        self._sessions = sessions
        self._runner = runner
        self._timeout = timeout

    def tools(self, principal: Principal) -> BackendToolList:
        """The definitions of the tools the caller's tenant policy allows."""
        allowed = self._allowlist.allowed_tool_names(principal.tenant_id)
        return BackendToolList(
            tools=[
                tool.definition()
                for name, tool in sorted(self._tools.items())
                if allowed is None or name in allowed
            ]
        )

    async def invoke(self, principal: Principal, tool_name: str, request: InvokeToolRequest) -> ToolResult:
        tool = self._tools.get(tool_name)
        if tool is None:
            raise BackendError(
                ErrorCode.TOOL_NOT_FOUND,
                f"There is no backend tool named {tool_name}",
                status_code=404,
                details={"toolName": tool_name},
            )
        allowed = self._allowlist.allowed_tool_names(principal.tenant_id)
        if allowed is not None and tool_name not in allowed:
            raise BackendError(
                ErrorCode.CAPABILITY_DENIED,
                f"{tool_name} is not allowed by this tenant's policy",
                status_code=403,
                details={"capability": Capability.BACKEND_TOOL_INVOKE.value, "toolName": tool_name},
            )
        arguments = _arguments(tool.arguments, request.arguments)
        workspace_id = await self._runner(self._sessions.workspace_of, principal, request.session_id)
        if workspace_id is None:
            raise session_not_found(request.session_id)
        call = ToolCall(principal, workspace_id, request.session_id, request.task_id, request.step_id)
        seconds = self._timeout.total_seconds()
        try:
            async with asyncio.timeout(seconds):
                output = await tool.run(call, arguments)
        except TimeoutError:
            unit = "second" if seconds == 1 else "seconds"
            return _failed(
                tool_name,
                request,
                ErrorCode.TOOL_EXECUTION_TIMEOUT,
                f"{tool_name} did not finish within {seconds:g} {unit}",
            )
        except ToolFailed as exc:
            return _failed(tool_name, request, exc.code, exc.message)
        except BackendError:
            raise  # a service it relies on failed (503, retryable): answered in the error shape
        except Exception:
            # A bug in a tool is this call's failure, not the service's: the model sees a failed call.
            logger.exception("backend tool %s failed", tool_name)
            return _failed(
                tool_name, request, ErrorCode.TOOL_EXECUTION_FAILED, f"{tool_name} failed unexpectedly"
            )
        return _succeeded(tool_name, request, output)


def _arguments(model: type[WireModel], arguments: dict[str, Any]) -> WireModel:
    try:
        return validate_json_value(model, arguments)
    except ValidationError as exc:
        shape = invalid_request(exc, prefix="arguments")
        raise BackendError(shape.code, shape.message, status_code=400, details=shape.details) from None


def _succeeded(tool_name: str, request: InvokeToolRequest, output: ToolOutput) -> ToolResult:
    return _answering(
        tool_name, request, ToolStatus.SUCCEEDED, output_text=output.text, artifacts=output.artifacts
    )


def _failed(tool_name: str, request: InvokeToolRequest, code: ErrorCode, message: str) -> ToolResult:
    error = ToolError(code=code, message=message)
    return _answering(tool_name, request, ToolStatus.FAILED, output_text=message, error=error)


def _answering(tool_name: str, request: InvokeToolRequest, status: ToolStatus, **fields: Any) -> ToolResult:
    # ToolResult.answering's counterpart for the REST request, which names its tool in the URL path.
    return ToolResult(
        tool_name=tool_name,
        session_id=request.session_id,
        task_id=request.task_id,
        step_id=request.step_id,
        tool_call_id=request.tool_call_id,
        status=status,
        **fields,
    )
