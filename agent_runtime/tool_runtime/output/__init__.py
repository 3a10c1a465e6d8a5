"""Output formatting (seed 003 §7): truncation, artifact extraction, results and error formatting."""

from __future__ import annotations

from agent_runtime.tool_runtime.output.artifacts import (
    ARTIFACT_THRESHOLD_BYTES,
    MAX_ARTIFACT_BYTES,
    Spool,
    SpoolFile,
    inline_or_spooled,
)
from agent_runtime.tool_runtime.output.capture import Capture
from agent_runtime.tool_runtime.output.results import ToolOutput, failed_result, succeeded_result
from agent_runtime.tool_runtime.output.truncate import HeadTail, marker, truncate_text

__all__ = [
    "ARTIFACT_THRESHOLD_BYTES",
    "MAX_ARTIFACT_BYTES",
    "Capture",
    "HeadTail",
    "Spool",
    "SpoolFile",
    "ToolOutput",
    "failed_result",
    "inline_or_spooled",
    "marker",
    "succeeded_result",
    "truncate_text",
]
