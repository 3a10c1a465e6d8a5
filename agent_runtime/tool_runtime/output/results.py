"""Tool results and error formatting (seed 003 §7.3): what a tool returns and how it reaches the host."""

from __future__ import annotations

from dataclasses import dataclass, field

from contracts.enums import ToolStatus
from contracts.errors import ErrorCode
from contracts.tools import ToolArtifact, ToolError, ToolRequest, ToolResult

__all__ = ["ToolOutput", "failed_result", "succeeded_result"]


@dataclass
class ToolOutput:
    """What a tool produced: the text the model sees and the artifacts the host uploads."""

    text: str
    artifacts: list[ToolArtifact] = field(default_factory=list)


def succeeded_result(request: ToolRequest, output: ToolOutput) -> ToolResult:
    return ToolResult.answering(
        request, ToolStatus.SUCCEEDED, output_text=output.text, artifacts=output.artifacts
    )


def failed_result(
    request: ToolRequest,
    code: ErrorCode,
    message: str,
    *,
    output_text: str | None = None,
    artifacts: list[ToolArtifact] | None = None,
) -> ToolResult:
    """``{"status": "failed", "error": {"code", "message"}}`` (seed 003 §7.3)."""
    return ToolResult.answering(
        request,
        ToolStatus.FAILED,
        error=ToolError(code=code, message=message),
        output_text=output_text,
        artifacts=artifacts or [],
    )
