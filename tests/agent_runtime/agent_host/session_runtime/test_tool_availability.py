"""Seed 002 "Tool Availability and Rendering": the catalogue through the restriction (the policy's
grants), allowlist (the task's options) and mode (executing or not) filters; the prompt rendered for
the visible tools only, once per render context."""

from __future__ import annotations

from collections.abc import Collection
from datetime import date

from agent_runtime.agent_host.checklist import SESSION_TOOL_DEFINITIONS
from agent_runtime.agent_host.session_runtime.tools import RenderContext, ToolAvailability
from contracts.enums import Capability, OsFamily, ToolName
from contracts.tools import ToolDefinition

CATALOGUE = [
    ToolDefinition(
        tool_name=name.value, description=f"The {name.value} tool.", input_schema={"type": "object"}
    )
    for name in (ToolName.READ_FILE, ToolName.WRITE_FILE, ToolName.RUN_COMMAND, ToolName.HTTP_REQUEST)
]


def catalogue(granted: Collection[Capability]) -> list[ToolDefinition]:
    return list(CATALOGUE)


def context(**changes: object) -> RenderContext:
    fields: dict[str, object] = {
        "executing": True,
        "granted": frozenset({Capability.FILE_READ, Capability.NETWORK_HTTP, Capability.SHELL_EXEC}),
        "allow_network": True,
        "workspace_paths": ("/work/project",),
        "os_family": OsFamily.LINUX,
        "day": date(2026, 3, 1),
        "instructions": "",
    }
    fields.update(changes)
    return RenderContext(**fields)  # type: ignore[arg-type]


def names(rendered_tools: list[ToolDefinition]) -> list[str]:
    return [tool.tool_name for tool in rendered_tools]


SESSION_TOOLS = [tool.tool_name for tool in SESSION_TOOL_DEFINITIONS]


def test_the_filters_in_order() -> None:
    tools = ToolAvailability(catalogue, SESSION_TOOL_DEFINITIONS, len)
    # Restriction: WriteFile's capability is not granted.
    assert names(tools.render(context()).tools) == ["ReadFile", "RunCommand", "HttpRequest", *SESSION_TOOLS]
    # Allowlist: a task without network access is not offered HttpRequest.
    assert names(tools.render(context(allow_network=False)).tools) == [
        "ReadFile",
        "RunCommand",
        *SESSION_TOOLS,
    ]
    # Mode: the checklist's session tools only while a task executes.
    assert names(tools.render(context(executing=False)).tools) == ["ReadFile", "RunCommand", "HttpRequest"]


def test_descriptions_are_rendered_for_the_visible_tools_only() -> None:
    rendered = ToolAvailability(catalogue, SESSION_TOOL_DEFINITIONS, len).render(
        context(allow_network=False, executing=False)
    )
    assert "RunCommand" in rendered.system_prompt
    assert "HttpRequest" not in rendered.system_prompt
    assert "WriteFile" not in rendered.system_prompt
    assert rendered.system_tokens == len(rendered.system_prompt)


def test_a_render_is_cached_per_render_context() -> None:
    tools = ToolAvailability(catalogue, SESSION_TOOL_DEFINITIONS, len)
    first = tools.render(context())
    assert tools.render(context()) is first
    assert tools.renders == 1
    other = tools.render(context(day=date(2026, 3, 2)))
    assert other.key != first.key
    assert tools.renders == 2
    tools.invalidate()
    assert tools.render(context()) is not first
    assert tools.renders == 3
