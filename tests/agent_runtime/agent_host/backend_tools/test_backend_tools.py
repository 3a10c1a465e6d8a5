"""Remote tools in the host (seed 000 §7.6): which ones a session offers, and how a call of one comes
back — always as a ``ToolResult``, whatever the Backend Tool Service does.

The service here is an in-memory stand-in with the client's own interface and its own errors (the
real service, through the real runtime, is tests/integration/runtime/test_runtime_backend_tools.py)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agent_runtime.agent_host.backend_tools import (
    BackendToolRouter,
    discover_backend_tools,
    remote_tool_allowed,
)
from agent_runtime.agent_host.routing import ToolDispatch, ToolTimeouts
from agent_runtime.agent_host.services import BackendError, BackendRejected, BackendUnreachable
from agent_runtime.tool_runtime import LocalToolRouter
from contracts.enums import ArtifactType, Capability, ToolStatus
from contracts.errors import CoworkError, ErrorCode, ErrorShape
from contracts.rest.tools import InvokeToolRequest
from contracts.tools import ToolArtifact, ToolDefinition, ToolResult
from tests.agent_runtime.agent_host.policy.bundles import enforcer
from tests.agent_runtime.agent_host.routing.support import IDS, FakeUploader, tool_call

SCHEMA = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}


def tool(name: str) -> ToolDefinition:
    return ToolDefinition(tool_name=name, description=f"The {name} tool.", input_schema=SCHEMA)


class Service:
    """The Backend Tool Service as ``BackendClient`` reaches it: lists tools, answers calls, or fails."""

    def __init__(self, *names: str) -> None:
        self.tools = [tool(name) for name in names]
        self.calls: list[tuple[str, InvokeToolRequest, float]] = []
        self.fail_with: BaseException | None = None
        self.list_delay_s = 0.0
        self.artifact_text: str | None = None
        self.invoke_delay_s = 0.0

    async def list_backend_tools(self) -> list[ToolDefinition]:
        await asyncio.sleep(self.list_delay_s)
        if self.fail_with is not None:
            raise self.fail_with
        return list(self.tools)

    async def invoke_backend_tool(
        self, tool_name: str, request: InvokeToolRequest, *, timeout_s: float = 130.0
    ) -> ToolResult:
        self.calls.append((tool_name, request, timeout_s))
        await asyncio.sleep(self.invoke_delay_s)
        if self.fail_with is not None:
            raise self.fail_with
        artifacts = []
        if self.artifact_text is not None:
            artifacts.append(
                ToolArtifact(
                    artifact_type=ArtifactType.TOOL_OUTPUT,
                    artifact_name="page.md",
                    content_type="text/markdown",
                    text=self.artifact_text,
                )
            )
        return ToolResult(
            tool_name=tool_name,
            session_id=request.session_id,
            task_id=request.task_id,
            step_id=request.step_id,
            status=ToolStatus.SUCCEEDED,
            output_text=f"{tool_name} found: {request.arguments}",
            artifacts=artifacts,
        )


GRANT = {"name": "BackendTool.Invoke", "allowedToolNames": ["WorkspaceSearch", "WebFetch"]}


# ------------------------------------------------------------------ discovery


async def test_only_the_tools_the_bundle_allows_are_kept() -> None:
    service = Service("WorkspaceSearch", "WebFetch", "DeployProd")
    found = await discover_backend_tools(service, enforcer(GRANT), reserved=())
    assert [t.tool_name for t in found.tools] == ["WorkspaceSearch", "WebFetch"]
    only_search = enforcer({**GRANT, "allowedToolNames": ["WorkspaceSearch"]})
    assert [t.tool_name for t in (await discover_backend_tools(service, only_search, reserved=())).tools] == [
        "WorkspaceSearch"
    ]
    every = enforcer({"name": "BackendTool.Invoke"})
    assert len((await discover_backend_tools(service, every, reserved=())).tools) == 3


async def test_without_the_grant_the_service_is_not_even_asked() -> None:
    service = Service("WorkspaceSearch")
    service.fail_with = AssertionError("asked")
    found = await discover_backend_tools(service, enforcer({"name": "File.Read"}), reserved=())
    assert (found.tools, found.problem) == ([], None)


async def test_a_tool_that_would_shadow_another_or_has_no_usable_name_is_left_out() -> None:
    service = Service(
        "ReadFile", "task_list_create", "docs/search", "bad name", "WorkspaceSearch", "WorkspaceSearch"
    )
    found = await discover_backend_tools(
        service, enforcer({"name": "BackendTool.Invoke"}), reserved={"ReadFile", "task_list_create"}
    )
    assert [t.tool_name for t in found.tools] == ["WorkspaceSearch"]


@pytest.mark.parametrize(
    "failure",
    [
        BackendUnreachable(
            ErrorCode.INTERNAL_ERROR, "The Backend Tool Service could not be reached", details={}
        ),
        BackendRejected(ErrorShape(code=ErrorCode.UNAUTHORIZED, message="token expired"), status=401),
    ],
)
async def test_a_service_that_cannot_answer_leaves_the_session_without_remote_tools(
    failure: CoworkError,
) -> None:
    service = Service("WorkspaceSearch")
    service.fail_with = failure
    found = await discover_backend_tools(service, enforcer(GRANT), reserved=())
    assert found.tools == []
    assert found.problem == failure.shape.message


async def test_a_slow_service_does_not_hold_up_the_session() -> None:
    service = Service("WorkspaceSearch")
    service.list_delay_s = 30
    async with asyncio.timeout(5):
        found = await discover_backend_tools(service, enforcer(GRANT), reserved=(), timeout_s=0.05)
    assert found.tools == []
    assert found.problem is not None
    assert "did not answer within 0.05 seconds" in found.problem


# ------------------------------------------------------------------ calls


@pytest.fixture
async def routing(tmp_path: Path) -> AsyncIterator[tuple[ToolDispatch, Service, FakeUploader]]:
    service = Service("WorkspaceSearch", "WebFetch")
    policy = enforcer({**GRANT, "allowedToolNames": ["WorkspaceSearch"]})
    uploader = FakeUploader()
    dispatch = ToolDispatch(
        LocalToolRouter(workspace_root=tmp_path), workspace_roots=[str(tmp_path)], uploader=uploader
    )
    dispatch.attach_remote(
        BackendToolRouter(service, service.tools), allowed=lambda name: remote_tool_allowed(policy, name)
    )
    yield dispatch, service, uploader
    await dispatch.aclose()


async def call(dispatch: ToolDispatch, name: str, **arguments: Any) -> ToolResult:
    prepared = dispatch.prepare(tool_call(name, **arguments), **IDS)
    assert prepared.failure is None, prepared.failure
    return await dispatch.execute(prepared, workspace_id="ws_1", scope=None, **IDS)


def test_remote_tools_are_offered_when_granted_and_allowed(
    routing: tuple[ToolDispatch, Service, FakeUploader],
) -> None:
    dispatch, _, _ = routing
    offered = {
        t.tool_name for t in dispatch.available_tools({Capability.FILE_READ, Capability.BACKEND_TOOL_INVOKE})
    }
    assert "WorkspaceSearch" in offered
    assert "WebFetch" not in offered  # discovered, but the bundle in force no longer allows it
    assert "WorkspaceSearch" not in {t.tool_name for t in dispatch.available_tools({Capability.FILE_READ})}
    assert dispatch.capability_of("WebFetch") is Capability.BACKEND_TOOL_INVOKE
    prepared = dispatch.prepare(tool_call("WorkspaceSearch", query="x"), **IDS)
    assert (prepared.capability, prepared.target) == (Capability.BACKEND_TOOL_INVOKE, "WorkspaceSearch")


async def test_a_call_goes_to_the_service_with_its_ids_and_comes_back_as_the_services_result(
    routing: tuple[ToolDispatch, Service, FakeUploader],
) -> None:
    dispatch, service, uploader = routing
    service.artifact_text = "# The whole page\n"
    result = await call(dispatch, "WorkspaceSearch", query="backup")
    assert result.status is ToolStatus.SUCCEEDED
    assert result.output_text == "WorkspaceSearch found: {'query': 'backup'}"
    assert result.tool_call_id == "call-1"
    ((name, request, _),) = service.calls
    assert name == "WorkspaceSearch"
    assert (request.session_id, request.task_id, request.step_id, request.tool_call_id) == (
        "sess-1",
        "task-1",
        "step-1",
        "call-1",
    )
    # The result's artifacts are uploaded like a local tool's (seed 000 §7.5).
    ((upload, content),) = uploader.uploads
    assert (upload.artifact_name, content) == ("page.md", b"# The whole page\n")
    assert result.artifact_uris == ["cowork://workspaces/ws_1/artifacts/art_1"]


@pytest.mark.parametrize(
    ("failure", "status", "code", "words"),
    [
        (
            BackendRejected(
                ErrorShape(code=ErrorCode.INVALID_REQUEST, message="arguments.query is required"), status=400
            ),
            ToolStatus.FAILED,
            ErrorCode.INVALID_REQUEST,
            "arguments.query is required",
        ),
        (
            BackendRejected(
                ErrorShape(code=ErrorCode.CAPABILITY_DENIED, message="not allowed by this tenant's policy"),
                status=403,
            ),
            ToolStatus.DENIED,
            ErrorCode.CAPABILITY_DENIED,
            "not allowed by this tenant's policy",
        ),
        (
            BackendUnreachable(
                ErrorCode.INTERNAL_ERROR, "Backend Tool Service: connection refused", details={}
            ),
            ToolStatus.FAILED,
            ErrorCode.TOOL_EXECUTION_FAILED,
            "is not available now",
        ),
        (
            BackendUnreachable(
                ErrorCode.INTERNAL_ERROR,
                "Backend Tool Service did not answer in time",
                details={"failure": "timeout"},
            ),
            ToolStatus.FAILED,
            ErrorCode.TOOL_EXECUTION_TIMEOUT,
            "did not answer in time",
        ),
        (
            BackendError(ErrorCode.INTERNAL_ERROR, "the result is for another tool call"),
            ToolStatus.FAILED,
            ErrorCode.TOOL_EXECUTION_FAILED,
            "cannot use",
        ),
    ],
    ids=["bad-arguments", "withdrawn", "unreachable", "timeout", "off-contract"],
)
async def test_whatever_the_service_does_the_call_ends_as_a_result_the_model_can_read(
    routing: tuple[ToolDispatch, Service, FakeUploader],
    failure: BaseException,
    status: ToolStatus,
    code: ErrorCode,
    words: str,
) -> None:
    dispatch, service, _ = routing
    service.fail_with = failure
    result = await call(dispatch, "WorkspaceSearch", query="backup")
    assert result.status is status
    assert result.error is not None
    assert result.error.code is code
    assert words in result.error.message
    assert "WorkspaceSearch" in result.error.message
    assert result.tool_call_id == "call-1"


async def test_ids_the_service_cannot_take_fail_the_call_before_anything_is_sent(
    routing: tuple[ToolDispatch, Service, FakeUploader],
) -> None:
    dispatch, service, _ = routing
    prepared = dispatch.prepare(tool_call("WorkspaceSearch", query="x"), **IDS)
    result = await dispatch.execute(
        prepared, workspace_id="ws_1", scope=None, session_id="sess-1", task_id="task-1", step_id="step\n1"
    )
    assert result.status is ToolStatus.FAILED
    assert result.error is not None
    assert result.error.code is ErrorCode.INVALID_REQUEST
    assert service.calls == []


async def test_a_remote_tool_this_session_does_not_have_is_judged_by_the_policy_first(tmp_path: Path) -> None:
    """Like an MCP server's missing tool: the loop asks the policy, so a tool the bundle does not allow
    is refused as such; one it allows is "not available" (the service did not offer it)."""
    dispatch = ToolDispatch(
        LocalToolRouter(workspace_root=tmp_path), workspace_roots=[str(tmp_path)], uploader=None
    )
    try:
        prepared = dispatch.prepare(tool_call("WebFetch", url="https://example.org"), **IDS)
    finally:
        await dispatch.aclose()
    assert prepared.capability is Capability.BACKEND_TOOL_INVOKE
    assert prepared.failure is not None
    assert prepared.failure.error is not None
    assert prepared.failure.error.code is ErrorCode.TOOL_NOT_FOUND
    assert "WebFetch is not available in this session" in prepared.failure.error.message


async def test_a_remote_call_past_its_budget_is_stopped_as_a_timeout(tmp_path: Path) -> None:
    """Seed 000 §7.4: remote tools get the "other" budget (120 s; a tenth of a second here)."""
    service = Service("WorkspaceSearch")
    service.invoke_delay_s = 30
    dispatch = ToolDispatch(
        LocalToolRouter(workspace_root=tmp_path),
        workspace_roots=[str(tmp_path)],
        uploader=None,
        timeouts=ToolTimeouts(other_s=0.1),
    )
    dispatch.attach_remote(BackendToolRouter(service, service.tools), allowed=lambda name: True)
    try:
        async with asyncio.timeout(10):
            result = await call(dispatch, "WorkspaceSearch", query="x")
    finally:
        await dispatch.aclose()
    assert result.status is ToolStatus.FAILED
    assert result.error is not None
    assert result.error.code is ErrorCode.TOOL_EXECUTION_TIMEOUT
