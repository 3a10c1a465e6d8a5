"""The tool registry (seed 003 §3): tool name → tool, built once per router."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping
from typing import Any

from agent_runtime.tool_runtime.tools.base import Tool
from agent_runtime.tool_runtime.tools.file import DeleteFile, EditFile, ReadFile, WriteFile
from agent_runtime.tool_runtime.tools.network import HttpRequest, Resolver
from agent_runtime.tool_runtime.tools.search import Glob, Grep, ListDirectory
from agent_runtime.tool_runtime.tools.shell import RunCommand
from contracts.tools import ToolDefinition

__all__ = ["ToolRegistry", "builtin_tools"]


def builtin_tools(
    *,
    resolver: Resolver | None = None,
    allow_loopback_http: bool = False,
    kill_grace_seconds: float = 5.0,
    environ: Mapping[str, str] | None = None,
) -> list[Tool[Any]]:
    """ReadFile, WriteFile, DeleteFile, RunCommand, HttpRequest (seed 003 §4), then the tools that
    spare the agent a shell command for everyday work: EditFile, ListDirectory, Glob, Grep."""
    return [
        ReadFile(),
        WriteFile(),
        DeleteFile(),
        EditFile(),
        ListDirectory(),
        Glob(),
        Grep(),
        RunCommand(kill_grace_seconds=kill_grace_seconds, environ=environ),
        HttpRequest(resolver=resolver, allow_loopback=allow_loopback_http),
    ]


class ToolRegistry:
    def __init__(self, tools: Iterable[Tool[Any]]) -> None:
        self._tools: dict[str, Tool[Any]] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"two tools are named {tool.name}")
            self._tools[tool.name] = tool
        # Built once: the definitions are fixed for the router's life and sent with every LLM call.
        self._definitions = [tool.definition() for tool in self._tools.values()]

    def get(self, name: str) -> Tool[Any] | None:
        return self._tools.get(name)

    def definitions(self) -> list[ToolDefinition]:
        return [definition.model_copy(deep=True) for definition in self._definitions]

    async def aclose(self) -> None:
        for tool in self._tools.values():
            with contextlib.suppress(Exception):
                await tool.aclose()
