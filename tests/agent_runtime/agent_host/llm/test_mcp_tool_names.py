"""MCP tools' ``server/tool`` names on the LLM wire, in both dialects, through a real request: the tool
list and the conversation's earlier calls carry the wire names the dialects allow, and the model's calls
come back with the ``server/tool`` names the rest of Cowork uses (seed 003 §9.2)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from agent_runtime.agent_host.llm import Dialect, GatewayConfig, LlmClient
from agent_runtime.scripted_gateway import ScriptedGateway
from agent_runtime.tool_runtime.mcp.manifest import WireNames
from contracts.tools import ToolDefinition

from .support import DIALECTS, POLICY, READ_FILE, assistant, call, result, user

WIRE_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
LONG = "a-rather-long-server_name/search.documents:v2 (beta) with a name far longer than sixty-four"


class Names:
    """The MCP client's mapping (``WireNames``), as the host's ``ToolNameMap`` sees it."""

    def __init__(self) -> None:
        self._names = WireNames()

    def wire_name(self, tool_name: str) -> str:
        return self._names.wire(tool_name)

    def internal_name(self, wire_name: str) -> str | None:
        return self._names.internal(wire_name)


def mcp_tool(name: str) -> ToolDefinition:
    return ToolDefinition(
        tool_name=name,
        description=f"The MCP tool {name}",
        input_schema={"type": "object", "properties": {"query": {"type": "string"}}},
    )


def sent_names(dialect: Dialect, body: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The tool list's names, and the names of the calls in the conversation, as sent."""
    if dialect == "anthropic":
        tools = [tool["name"] for tool in body["tools"]]
        calls = [
            block["name"]
            for message in body["messages"]
            if message["role"] == "assistant"
            for block in message["content"]
            if block.get("type") == "tool_use"
        ]
    else:
        tools = [tool["function"]["name"] for tool in body["tools"]]
        calls = [
            call["function"]["name"]
            for message in body["messages"]
            if message["role"] == "assistant"
            for call in message.get("tool_calls") or []
        ]
    return tools, calls


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_mcp_tool_names_go_out_as_wire_names_and_come_back_as_server_tool(dialect: Dialect) -> None:
    names = Names()
    long_wire = names.wire_name(LONG)
    script = [
        {
            "toolCalls": [
                {"id": "c2", "name": "docs__search", "arguments": {"query": "again"}},
                {"id": "c3", "name": long_wire, "arguments": {}},
                {"id": "c4", "name": "ReadFile", "arguments": {"path": "/p"}},
                {"id": "c5", "name": "made-up__tool", "arguments": {}},
            ]
        }
    ]
    history = [
        user("Search the docs"),
        assistant("", call("c1", "docs/search", query="first")),
        result("c1", "found: first", name="docs/search"),
    ]
    async with ScriptedGateway(script) as gateway:
        client = LlmClient(GatewayConfig(gateway.url, None, dialect, model="model-first"), tool_names=names)
        response = await client.stream(
            policy=POLICY,
            system_prompt="You help.",
            messages=history,
            tools=[READ_FILE, mcp_tool("docs/search"), mcp_tool(LONG)],
        )
        body = gateway.requests[0].body
    tools, calls = sent_names(dialect, body)
    assert tools == ["ReadFile", "docs__search", long_wire]
    assert all(WIRE_NAME.fullmatch(name) for name in tools), tools
    assert calls == ["docs__search"]
    assert "/" not in str(tools) + str(calls)
    # Back from the model: MCP tools under their own names, built-ins and unknown names untouched.
    assert [c.tool_name for c in response.tool_calls] == ["docs/search", LONG, "ReadFile", "made-up__tool"]
    assert response.tool_calls[0].arguments == {"query": "again"}


@pytest.mark.parametrize("dialect", DIALECTS)
def test_without_mcp_tools_the_body_is_what_it_always_was(dialect: Dialect) -> None:
    plain = LlmClient(GatewayConfig("http://127.0.0.1:9", None, dialect, model="model-first"))
    mapped = LlmClient(
        GatewayConfig("http://127.0.0.1:9", None, dialect, model="model-first"), tool_names=Names()
    )
    messages = [user("hi"), assistant("", call("c1", "ReadFile", path="/x")), result("c1", "text")]
    arguments: dict[str, Any] = {
        "policy": POLICY,
        "system_prompt": "S",
        "messages": messages,
        "tools": [READ_FILE],
    }
    assert plain.build_body(**arguments) == mapped.build_body(**arguments)
