"""The runtime's client of the Backend Tool Service: against the real local backend (``cowork-backend
serve --store local``, its tenant's policy granting both tools, WebFetch allowed to loopback by its
development setting), and against a fake server for answers the real one never gives."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from agent_runtime.agent_host.services import (
    REMOTE_TOOL_TIMEOUT_S,
    BackendClient,
    BackendConfig,
    BackendError,
    BackendRejected,
)
from contracts.enums import ArtifactType, ToolStatus
from contracts.errors import ErrorCode
from contracts.rest.tools import InvokeToolRequest
from contracts.rest.workspaces import ArtifactUploadRequest
from contracts.tools import ToolResult
from tests.backend.tools.pages import Page, serving_pages
from tests.support.backend import Backend, start_backend

from .test_backend_client_live import new_session


@pytest.fixture(scope="module")
def backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    root = tmp_path_factory.mktemp("backend")
    config_dir = root / "config"
    (config_dir / "tenants").mkdir(parents=True)
    (config_dir / "backend.toml").write_text("[tools]\nwebFetchAllowLoopback = true\n")
    grants = [
        {"name": "File.Read"},
        {"name": "File.Write"},
        {"name": "Workspace.Upload"},
        {"name": "BackendTool.Invoke", "allowedToolNames": ["WorkspaceSearch", "WebFetch"]},
    ]
    (config_dir / "tenants" / "local.json").write_text(json.dumps({"capabilities": grants}))
    with start_backend(root / "data", config_dir=config_dir) as running:
        yield running


@pytest.fixture
def config(backend: Backend) -> BackendConfig:
    return BackendConfig.from_environment(
        {"COWORK_BACKEND_URL": backend.url, "COWORK_BACKEND_TOKEN": backend.token}
    )


def _call(session_id: str, arguments: dict[str, object]) -> InvokeToolRequest:
    return InvokeToolRequest(
        session_id=session_id, task_id="task_2", step_id="step_5", tool_call_id="toolu_1", arguments=arguments
    )


async def test_the_allowed_tools_are_listed_and_invoked(config: BackendConfig, tmp_path: Path) -> None:
    async with BackendClient(config) as client:
        assert sorted(tool.tool_name for tool in await client.list_backend_tools()) == [
            "WebFetch",
            "WorkspaceSearch",
        ]
        created = await new_session(client, tmp_path)
        assert created.session_id is not None
        assert created.workspace_id is not None
        await client.upload_artifact(
            ArtifactUploadRequest(
                workspace_id=created.workspace_id,
                session_id=created.session_id,
                task_id="task_1",
                step_id="step_1",
                artifact_type=ArtifactType.TOOL_OUTPUT,
                artifact_name="pytest.log",
                content_type="text/plain",
                content_base64=base64.b64encode(
                    b"FAILED test_checkout - the coupon total is off by one"
                ).decode(),
            )
        )
        found = await client.invoke_backend_tool(
            "WorkspaceSearch", _call(created.session_id, {"query": "coupon"})
        )
        assert found.status is ToolStatus.SUCCEEDED
        assert (found.tool_call_id, found.step_id) == ("toolu_1", "step_5")
        assert "**coupon**" in (found.output_text or "")

        with serving_pages({"/guide": Page(b"<title>Guide</title><p>Step <em>one</em></p>")}) as pages:
            fetched = await client.invoke_backend_tool(
                "WebFetch", _call(created.session_id, {"url": f"{pages.url}/guide"})
            )
        assert fetched.status is ToolStatus.SUCCEEDED
        assert fetched.output_text == f"# Guide\n\nSource: {pages.url}/guide\n\nStep *one*"


async def test_refusals_are_rejections_with_the_services_shape(config: BackendConfig, tmp_path: Path) -> None:
    async with BackendClient(config) as client:
        created = await new_session(client, tmp_path)
        assert created.session_id is not None
        with pytest.raises(BackendRejected) as bad:
            await client.invoke_backend_tool("WorkspaceSearch", _call(created.session_id, {"limit": 3}))
        assert (bad.value.status, bad.value.code) == (400, ErrorCode.INVALID_REQUEST)
        assert bad.value.message == "arguments.query is required"
        with pytest.raises(BackendRejected) as unknown:
            await client.invoke_backend_tool("Teleport", _call(created.session_id, {}))
        assert (unknown.value.status, unknown.value.code) == (404, ErrorCode.TOOL_NOT_FOUND)
        with pytest.raises(BackendError) as path:
            await client.invoke_backend_tool("../sessions", _call(created.session_id, {}))
        assert path.value.code is ErrorCode.INVALID_REQUEST


def _answering(result: dict[str, object], seen: list[httpx.Request]) -> httpx.MockTransport:
    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=result)

    return httpx.MockTransport(handle)


RESULT = {
    "toolName": "WebFetch",
    "sessionId": "sess_1",
    "taskId": "task_2",
    "stepId": "step_5",
    "status": "succeeded",
}


async def test_the_client_waits_the_remote_budget_and_refuses_results_it_cannot_trust() -> None:
    config = BackendConfig(url="http://127.0.0.1:9", token="t0ken")
    seen: list[httpx.Request] = []
    async with BackendClient(config, transport=_answering(RESULT, seen)) as client:
        result = await client.invoke_backend_tool(
            "WebFetch", _call("sess_1", {"url": "https://example.com/"})
        )
    assert result == ToolResult.model_validate_json(json.dumps(RESULT))
    assert seen[0].extensions["timeout"]["read"] == REMOTE_TOOL_TIMEOUT_S
    assert seen[0].url.path == "/tools/WebFetch/invoke"

    local_file = {
        **RESULT,
        "artifacts": [{"artifactType": "tool_output", "artifactName": "x", "dataPath": "/etc/shadow"}],
    }
    other_call = {**RESULT, "stepId": "step_9"}
    for answer in (local_file, other_call):
        async with BackendClient(config, transport=_answering(answer, [])) as client:
            with pytest.raises(BackendError) as unexpected:
                await client.invoke_backend_tool("WebFetch", _call("sess_1", {"url": "https://example.com/"}))
        assert unexpected.value.code is ErrorCode.INTERNAL_ERROR
