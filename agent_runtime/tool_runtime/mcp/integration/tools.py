"""An MCP server's tool as Cowork registers it (seed 003 §9.2 step 3, §9.4, §9.5): only the ones the
policy allowlists, each with its input schema compiled once, so every call's arguments are checked
before anything is sent to the server.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agent_runtime.tool_runtime.mcp.manifest import McpToolSpec, RejectedTool, translate_tools, validator_for
from contracts.mcp import McpRejectedTool, tool_pattern_matches
from contracts.tools import ToolDefinition

__all__ = ["NOT_ALLOWLISTED", "RegisteredTool", "argument_problems", "register_tools"]

NOT_ALLOWLISTED = "not allowed by the policy (Mcp.Invoke allowedToolNames)"
_MAX_DESCRIPTION = 4000


@dataclass(frozen=True, slots=True)
class RegisteredTool:
    spec: McpToolSpec
    definition: ToolDefinition
    validator: Any
    """The jsonschema validator of the tool's input schema (checked sound at ingress)."""

    @property
    def destructive(self) -> bool:
        """MCP tool annotations are hints whose defaults assume the worst: a tool may destroy data unless
        it says it only reads (``readOnlyHint``) or does not destroy (``destructiveHint: false``)."""
        hints = self.spec.annotations
        if hints.get("readOnlyHint") is True:
            return False
        return hints.get("destructiveHint") is not False


def register_tools(
    server_name: str, raw_tools: list[dict[str, Any]], allowed: Sequence[str]
) -> tuple[list[RegisteredTool], list[McpRejectedTool], list[RejectedTool]]:
    """The tools to register — sound and allowlisted — then every tool left out and why, then the
    malformed ones alone (for the log)."""
    specs, malformed = translate_tools(server_name, raw_tools)
    registered: list[RegisteredTool] = []
    left_out = [McpRejectedTool(tool_name=tool.tool_name, reason=tool.reason) for tool in malformed]
    for spec in specs:
        if not any(tool_pattern_matches(pattern, spec.qualified_name) for pattern in allowed):
            left_out.append(McpRejectedTool(tool_name=spec.tool_name, reason=NOT_ALLOWLISTED))
            continue
        validator_class = validator_for(spec.input_schema)
        assert validator_class is not None  # translate_tools refused schemas of unknown dialects
        fallback = f"The tool {spec.tool_name} of the MCP server {server_name}"
        description = spec.description or spec.title or fallback
        registered.append(
            RegisteredTool(
                spec=spec,
                definition=ToolDefinition(
                    tool_name=spec.qualified_name,
                    description=description[:_MAX_DESCRIPTION],
                    input_schema=spec.input_schema,
                ),
                validator=validator_class(spec.input_schema),
            )
        )
    return registered, left_out, malformed


def argument_problems(tool: RegisteredTool, arguments: Mapping[str, Any]) -> list[str]:
    """What is wrong with ``arguments`` for ``tool`` (JSON Schema validation); empty when they fit."""
    try:
        found = tool.validator.iter_errors(dict(arguments))
        errors = sorted(found, key=lambda error: [str(part) for part in error.absolute_path])
    except RecursionError:
        return ["arguments are nested too deeply"]
    problems = []
    for error in errors[:5]:
        where = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in error.absolute_path)
        message = error.message if len(error.message) <= 300 else error.message[:297] + "..."
        problems.append(f"arguments{where}: {message}")
    if len(errors) > 5:
        problems.append(f"and {len(errors) - 5} more problems")
    return problems
