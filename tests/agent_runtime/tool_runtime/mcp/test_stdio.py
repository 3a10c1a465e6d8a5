"""A local MCP server over stdio: the official SDK's server run as a child process."""

from __future__ import annotations

import asyncio
import json
import os
import sys

import pytest

from agent_runtime.tool_runtime.mcp.elicitation import answer_with_defaults
from agent_runtime.tool_runtime.mcp.errors import McpProtocolError, McpResponseTooLarge, McpTransportError
from agent_runtime.tool_runtime.mcp.protocol import Progress
from agent_runtime.tool_runtime.mcp.stdio import StdioMcpSession
from tests.support.mcp_servers import SDK_TOOLS
from tests.support.peers import REPO_ROOT

SERVER = [sys.executable, "-m", "tests.support.mcp_servers", "stdio"]


def _session(command: list[str] = SERVER, **options: object) -> StdioMcpSession:
    return StdioMcpSession(
        "local",
        command,
        env=dict(os.environ),
        cwd=REPO_ROOT,
        elicitation=answer_with_defaults,
        call_timeout_s=30,
        **options,  # type: ignore[arg-type]
    )


def _text(result: dict[str, object]) -> str:
    content = result["content"]
    assert isinstance(content, list)
    return "".join(block["text"] for block in content)


async def test_a_local_server_lists_calls_elicits_and_stops_on_close() -> None:
    session = _session()
    info = await session.open()
    try:
        assert info.protocol_version == "2025-11-25"
        assert [tool["name"] for tool in await session.list_tools()] == [tool.name for tool in SDK_TOOLS]
        assert _text(await session.call_tool("echo", {"text": "over stdio"})) == "over stdio"
        updates: list[Progress] = []
        await session.call_tool("slow", {"seconds": 0.05}, on_progress=updates.append)
        assert [update.message for update in updates] == ["halfway", "done"]
        answer = json.loads(_text(await session.call_tool("ask", {})))
        assert answer["action"] == "accept"
        with pytest.raises(McpProtocolError, match="Unknown tool"):
            await session.call_tool("nope", {})
        await session.ping()
        pid = session.pid
        assert pid is not None
    finally:
        await session.aclose()
    assert session.pid is None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def test_cancelling_a_call_tells_the_local_server() -> None:
    session = _session()
    await session.open()
    try:
        call = asyncio.create_task(session.call_tool("slow", {"seconds": 30}))
        await asyncio.sleep(0.5)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert _text(await session.call_tool("echo", {"text": "next"})) == "next"
    finally:
        await session.aclose()


async def test_a_line_over_the_cap_fails_the_session() -> None:
    session = _session(max_response_bytes=64 * 1024)
    await session.open()
    try:
        with pytest.raises(McpResponseTooLarge):
            await session.call_tool("big", {"size": 100_000})
    finally:
        await session.aclose()


async def test_a_program_that_exits_says_why() -> None:
    session = _session(
        [sys.executable, "-c", "import sys; print('no config found', file=sys.stderr); sys.exit(3)"]
    )
    with pytest.raises(McpTransportError, match=r"exit code 3.*no config found"):
        await session.open()


async def test_a_missing_program_cannot_start() -> None:
    session = _session(["/nonexistent/mcp-server"])
    with pytest.raises(McpTransportError, match="Could not start"):
        await session.open()
