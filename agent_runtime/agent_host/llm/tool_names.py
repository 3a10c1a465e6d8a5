"""Tool names on the LLM wire (seed 003 §9.2): MCP tools are ``server/tool`` inside Cowork, and neither
dialect allows ``/`` in a tool name (Anthropic and OpenAI: ``^[a-zA-Z0-9_-]{1,64}$``).

The MCP client owns the reversible mapping (:class:`ToolNameMap`); this module applies it to a request
— the tool definitions and every tool call already in the conversation — and back to the calls the
model answers with. Built-in tool names never contain ``/`` and pass unchanged either way, and a wire
name the map does not know is kept as the model wrote it (the call then fails as an unknown tool).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from contracts.messages import ConversationMessage
from contracts.tools import ToolCall, ToolDefinition

__all__ = ["ToolNameMap", "names_from_wire", "names_to_wire"]


class ToolNameMap(Protocol):
    def wire_name(self, tool_name: str) -> str: ...

    def internal_name(self, wire_name: str) -> str | None: ...


def _mapped(name: str) -> bool:
    return "/" in name


def names_to_wire(
    names: ToolNameMap, tools: Sequence[ToolDefinition], messages: Sequence[ConversationMessage]
) -> tuple[list[ToolDefinition], list[ConversationMessage]]:
    """The tools and messages with every MCP tool name in its wire form (copies; inputs untouched)."""
    wire_tools = [
        tool.model_copy(update={"tool_name": names.wire_name(tool.tool_name)})
        if _mapped(tool.tool_name)
        else tool
        for tool in tools
    ]
    wire_messages: list[ConversationMessage] = []
    for message in messages:
        update: dict[str, object] = {}
        calls = message.tool_calls
        if calls and any(_mapped(call.tool_name) for call in calls):
            update["tool_calls"] = [
                call.model_copy(update={"tool_name": names.wire_name(call.tool_name)})
                if _mapped(call.tool_name)
                else call
                for call in calls
            ]
        if message.tool_name is not None and _mapped(message.tool_name):
            update["tool_name"] = names.wire_name(message.tool_name)
        wire_messages.append(message.model_copy(update=update) if update else message)
    return wire_tools, wire_messages


def names_from_wire(names: ToolNameMap, calls: Sequence[ToolCall]) -> list[ToolCall]:
    """The model's tool calls with wire names of MCP tools turned back into ``server/tool``."""
    internal = []
    for call in calls:
        name = names.internal_name(call.tool_name)
        internal.append(call if name is None else call.model_copy(update={"tool_name": name}))
    return internal
