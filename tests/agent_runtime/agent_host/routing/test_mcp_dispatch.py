"""MCP tools in the host's dispatch (seed 000 §7.2–§7.5, seed 003 §9.1): mapped to ``Mcp.Invoke``,
offered only when it is granted, routed to the MCP client, their artifacts uploaded like any tool's,
the host's timeout a backstop behind the client's own — with the real tool runtime, the real MCP
client and the official SDK's server on loopback."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from agent_runtime.agent_host.routing import DEFAULT_TIMEOUTS, ToolDispatch
from agent_runtime.tool_runtime import LocalToolRouter
from agent_runtime.tool_runtime.mcp.integration import McpManager
from contracts.enums import Capability, ToolStatus
from contracts.errors import ErrorCode
from contracts.mcp import McpServerConfig
from contracts.mcp_boundary import ElicitationAsk, ElicitationReply, McpHooks, McpSetup
from contracts.validation import validate_json_value
from tests.agent_runtime.agent_host.routing.support import IDS, FakeUploader, tool_call
from tests.integration.mcp.servers import PNG, LoopbackServer, docs_server


@pytest.fixture
def docs_url() -> Iterator[str]:
    server, _ = docs_server()
    with LoopbackServer(server.streamable_http_app) as running:
        yield running.url


async def never_asked(ask: ElicitationAsk) -> ElicitationReply:
    raise AssertionError("no question expected")


@pytest.fixture
async def mcp(docs_url: str) -> AsyncIterator[McpManager]:
    config = validate_json_value(
        McpServerConfig, {"name": "docs", "url": docs_url, "allowInsecureLoopback": True}
    )
    manager = McpManager(
        McpSetup(
            session_id="sess-1",
            servers=(config,),
            allowed_tool_names=("docs/search", "docs/delete_page", "docs/picture"),
            allow_local_servers=False,
            workspace_paths=(),
            environ={},
            hooks=McpHooks(
                emit=lambda *_, **__: None, elicit=never_asked, check_local_command=lambda *_: None
            ),
        )
    )
    manager.start()
    await manager.wait_started(20)
    await manager.refresh()
    yield manager
    await manager.aclose()


@pytest.fixture
async def dispatch(tmp_path: Path, mcp: McpManager) -> AsyncIterator[tuple[ToolDispatch, FakeUploader]]:
    uploader = FakeUploader()
    dispatch = ToolDispatch(
        LocalToolRouter(workspace_root=tmp_path), workspace_roots=[str(tmp_path)], uploader=uploader
    )
    dispatch.attach_mcp(mcp)
    yield dispatch, uploader
    await dispatch.aclose()


async def test_mcp_tools_map_to_mcp_invoke_and_are_offered_only_when_it_is_granted(
    dispatch: tuple[ToolDispatch, FakeUploader],
) -> None:
    routing, _ = dispatch
    with_mcp = {
        tool.tool_name for tool in routing.available_tools({Capability.FILE_READ, Capability.MCP_INVOKE})
    }
    assert {"ReadFile", "docs/search", "docs/delete_page", "docs/picture"} <= with_mcp
    without = {tool.tool_name for tool in routing.available_tools({Capability.FILE_READ})}
    assert "docs/search" not in without
    prepared = routing.prepare(tool_call("docs/delete_page", page="p"), **IDS)
    assert prepared.failure is None
    assert prepared.capability is Capability.MCP_INVOKE
    assert prepared.target == "docs/delete_page"
    assert prepared.facts.destructive is True
    assert routing.prepare(tool_call("docs/search", query="q"), **IDS).facts.destructive is False


async def test_a_configured_servers_tool_that_is_not_registered_is_named_as_such(
    dispatch: tuple[ToolDispatch, FakeUploader],
) -> None:
    routing, _ = dispatch
    absent = routing.prepare(tool_call("docs/secret"), **IDS)
    assert absent.capability is Capability.MCP_INVOKE  # the loop asks the policy about it first
    assert absent.failure is not None
    assert absent.failure.error is not None
    assert absent.failure.error.code is ErrorCode.TOOL_NOT_FOUND
    assert absent.failure.error.message == "The MCP server docs has no tool 'secret'."
    stranger = routing.prepare(tool_call("nobody/search"), **IDS)
    assert stranger.capability is None
    assert stranger.failure is not None
    assert stranger.failure.error is not None
    assert "Unknown tool" in stranger.failure.error.message


async def test_a_call_runs_at_the_server_and_its_image_is_uploaded_and_released(
    dispatch: tuple[ToolDispatch, FakeUploader],
) -> None:
    routing, uploader = dispatch
    prepared = routing.prepare(tool_call("docs/picture"), **IDS)
    result = await routing.execute(prepared, workspace_id="ws-1", scope=None, **IDS)
    assert result.status is ToolStatus.SUCCEEDED, result
    assert result.artifacts == []
    assert len(result.artifact_uris) == 1
    [(request, content)] = uploader.uploads
    assert content == PNG
    assert request.content_type == "image/png"
    searched = await routing.execute(
        routing.prepare(tool_call("docs/search", "c2", query="q"), **IDS),
        workspace_id="ws-1",
        scope=None,
        **IDS,
    )
    assert searched.output_text == "found: q"


def test_the_hosts_timeout_for_mcp_tools_is_a_backstop_behind_the_clients_own() -> None:
    assert DEFAULT_TIMEOUTS.other_s == 120
    assert DEFAULT_TIMEOUTS.for_call(Capability.MCP_INVOKE, {}) == 120 + DEFAULT_TIMEOUTS.grace_s
