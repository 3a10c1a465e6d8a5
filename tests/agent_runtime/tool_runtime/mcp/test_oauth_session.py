"""End to end: ``McpSession`` with ``oauth_auth`` against the official SDK's MCP server behind the
loopback authorization server — initialize, list and call, a token revoked mid-session, close."""

from __future__ import annotations

import pytest
from mcp.server.mcpserver import MCPServer

from agent_runtime.tool_runtime.mcp.errors import McpAuthorizationError
from agent_runtime.tool_runtime.mcp.oauth import memory_token_store, oauth_auth
from agent_runtime.tool_runtime.mcp.session import McpSession
from tests.support.mcp_oauth_server import OAuthServerOptions, OAuthTestServer


def sdk_server() -> MCPServer:
    server = MCPServer("guarded")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    return server


async def test_a_session_authorizes_lists_and_calls_through_oauth() -> None:
    app = sdk_server().streamable_http_app(streamable_http_path="/mcp")
    options = OAuthServerOptions(challenge_scope="mcp:tools")
    with OAuthTestServer(options, inner_app=app) as server:
        auth = oauth_auth(
            server.mcp_url,
            store=memory_token_store(),
            prompt=None,
            headless=True,
            allow_insecure_loopback=True,
        )
        session = McpSession("guarded", server.mcp_url, auth=auth, allow_insecure_loopback=True)
        try:
            info = await session.open()
            tools = await session.list_tools()
            first = await session.call_tool("add", {"a": 2, "b": 3})
            server.revoke_access_tokens()  # the next call meets a 401 and refreshes
            second = await session.call_tool("add", {"a": 4, "b": 5})
        finally:
            await session.aclose()
    assert info.name == "guarded"
    assert [tool["name"] for tool in tools] == ["add"]
    assert first["content"][0]["text"] == "5"
    assert second["content"][0]["text"] == "9"
    assert len(server.records.authorizations) == 1
    assert server.records.authorizations[0]["scope"] == "mcp:tools"
    grants = [request.form["grant_type"] for request in server.records.token_requests]
    assert grants == ["authorization_code", "refresh_token"]


async def test_a_session_whose_server_refuses_authorization_fails_with_an_authorization_error() -> None:
    app = sdk_server().streamable_http_app(streamable_http_path="/mcp")
    with OAuthTestServer(OAuthServerOptions(auto_approve=False), inner_app=app) as server:
        auth = oauth_auth(
            server.mcp_url,
            store=memory_token_store(),
            prompt=None,
            headless=True,
            allow_insecure_loopback=True,
        )
        session = McpSession("guarded", server.mcp_url, auth=auth, allow_insecure_loopback=True)
        try:
            with pytest.raises(McpAuthorizationError, match="approve by themselves"):
                await session.open()
        finally:
            await session.aclose()
