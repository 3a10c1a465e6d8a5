"""Tool availability and rendering (seed 002 "Tool Availability and Rendering").

1. Start from the catalogue: every tool the tool runtime offers, and the session tools.
2. Filter, in order: *restriction* — the capabilities the policy bundle grants (a tool the policy
   would deny on every call is not offered, seed 000 §5.2/§8.2); *allowlist* — the task's options
   (``allowNetwork: false`` hides ``HttpRequest``); *mode* — the checklist's session tools exist only
   while a task executes (seed 002: never outside executing work).
3. Render the descriptions — the system prompt lists the tools — for the visible tools only.
4. Cache the result per render context (the visible tools and everything else the prompt is made of),
   so repeated turns under the same state reuse the same prompt and its token counts.

The provider-facing tool shape does not change: providers receive name, description and input schema.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import date

from agent_runtime.agent_host.thread import build_system_prompt
from contracts.enums import TOOL_CAPABILITIES, Capability, OsFamily, ToolName
from contracts.mcp import split_tool_name
from contracts.tools import ToolDefinition

__all__ = ["RenderContext", "RenderedTools", "ToolAvailability", "visible_tools"]


@dataclass(frozen=True, slots=True)
class RenderContext:
    """Everything the visible tools and their rendered prompt depend on (seed 002's render-context
    inputs, as far as they exist here: execution mode, shell and network availability through the
    grants, the project folders, the platform, the day, the instruction files)."""

    executing: bool
    granted: frozenset[Capability]
    allow_network: bool
    workspace_paths: tuple[str, ...]
    os_family: OsFamily
    day: date
    instructions: str


@dataclass(frozen=True, slots=True)
class RenderedTools:
    key: str
    """SHA-256 (hex, 16 characters) of the visible tools and the render context."""
    tools: list[ToolDefinition]
    system_prompt: str
    system_tokens: int
    tools_tokens: int

    @property
    def names(self) -> list[str]:
        return [tool.tool_name for tool in self.tools]


def _capability(tool_name: str) -> Capability | None:
    try:
        return TOOL_CAPABILITIES[ToolName(tool_name)]
    except ValueError:
        # An MCP server's tool, "server/tool" (seed 003 §9.2): the tool runtime registered only those
        # the bundle allowlists.
        return Capability.MCP_INVOKE if split_tool_name(tool_name) is not None else None


CapabilityOf = Callable[[str], Capability | None]
"""A tool name's capability as the session routes it (``ToolDispatch.capability_of``): remote tools'
names are known only to the session that discovered them."""


def visible_tools(
    catalogue: Sequence[ToolDefinition],
    session_tools: Sequence[ToolDefinition],
    context: RenderContext,
    capability_of: CapabilityOf = _capability,
) -> list[ToolDefinition]:
    """Steps 1–2: the catalogue through the restriction, allowlist and mode filters, in order."""
    usable = set(context.granted)
    if not context.allow_network:
        usable.discard(Capability.NETWORK_HTTP)
    visible = [tool for tool in catalogue if capability_of(tool.tool_name) in usable]
    if context.executing:
        visible += session_tools
    return visible


class ToolAvailability:
    """Steps 1–4 for one session; ``render`` is called before each task and after a policy refresh."""

    def __init__(
        self,
        catalogue: Callable[[Collection[Capability]], list[ToolDefinition]],
        session_tools: Sequence[ToolDefinition],
        count_tokens: Callable[[str], int],
        capability_of: CapabilityOf = _capability,
    ) -> None:
        self._catalogue = catalogue
        self._capability_of = capability_of
        self._session_tools = list(session_tools)
        self._count_tokens = count_tokens
        self._cache: dict[tuple[tuple[str, ...], RenderContext], RenderedTools] = {}
        self.renders = 0
        """Prompts actually built (not served from the cache): for tests and diagnostics."""

    def render(self, context: RenderContext) -> RenderedTools:
        tools = visible_tools(
            self._catalogue(frozenset(Capability)), self._session_tools, context, self._capability_of
        )
        names = tuple(tool.tool_name for tool in tools)
        cached = self._cache.get((names, context))
        if cached is not None:
            return cached
        self.renders += 1
        prompt = build_system_prompt(
            context.workspace_paths,
            context.os_family,
            tools,
            now=context.day,
            instructions=context.instructions,
        )
        schema = json.dumps([tool.to_wire() for tool in tools], separators=(",", ":"))
        key_source = json.dumps(
            [
                names,
                context.executing,
                context.allow_network,
                sorted(c.value for c in context.granted),
                context.workspace_paths,
                context.os_family.value,
                context.day.isoformat(),
                context.instructions,
            ],
        )
        rendered = RenderedTools(
            key=hashlib.sha256(key_source.encode()).hexdigest()[:16],
            tools=tools,
            system_prompt=prompt,
            system_tokens=self._count_tokens(prompt),
            tools_tokens=self._count_tokens(schema),
        )
        self._cache[(names, context)] = rendered
        return rendered

    def invalidate(self) -> None:
        """Seed 002 "Workspace Refresh": a new tool registry or rule set renders afresh."""
        self._cache.clear()
