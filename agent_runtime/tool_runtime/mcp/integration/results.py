"""An MCP tool's answer as a ``ToolResult`` (seed 003 §9.2 step 4, §9.5, §7): the text the model reads,
cut to the output limit like any tool's (head and tail, the whole text kept as an artifact), and each
image, audio clip or embedded resource as an artifact through the router's spool, uploaded by the host
like every other artifact (seed 000 §7.5).
"""

from __future__ import annotations

import os
import re

from agent_runtime.tool_runtime.mcp.results import McpAttachment, TranslatedResult
from agent_runtime.tool_runtime.output.artifacts import Spool, SpoolFile, inline_or_spooled
from agent_runtime.tool_runtime.output.results import ToolOutput, failed_result, succeeded_result
from agent_runtime.tool_runtime.output.truncate import truncate_text
from agent_runtime.tool_runtime.tools.base import DEFAULT_MAX_OUTPUT_BYTES
from contracts.enums import ArtifactType
from contracts.errors import ErrorCode
from contracts.tools import ToolArtifact, ToolRequest, ToolResult

__all__ = ["tool_result"]

_SUFFIX = re.compile(r"\.[A-Za-z0-9]{1,10}")


def tool_result(request: ToolRequest, translated: TranslatedResult, spool: Spool) -> ToolResult:
    limit = DEFAULT_MAX_OUTPUT_BYTES
    if request.scope is not None and request.scope.max_output_bytes is not None:
        limit = request.scope.max_output_bytes
    artifacts = [_attachment(spool, attachment) for attachment in translated.attachments]
    text = translated.output_text
    shown = truncate_text(text, limit)
    if shown != text:
        name = f"{request.tool_name.replace('/', '_')}-output.txt"
        artifacts.append(inline_or_spooled(spool, ArtifactType.TOOL_OUTPUT, name, "text/plain", text))
    if translated.failed:
        message = translated.error or "The MCP tool failed"
        return failed_result(
            request,
            ErrorCode.TOOL_EXECUTION_FAILED,
            truncate_text(message, 2000),
            output_text=shown if shown and shown != message else None,
            artifacts=artifacts,
        )
    return succeeded_result(request, ToolOutput(text=shown, artifacts=artifacts))


def _attachment(spool: Spool, attachment: McpAttachment) -> ToolArtifact:
    stem, suffix = os.path.splitext(attachment.name)
    if not _SUFFIX.fullmatch(suffix):
        suffix = ""  # the name comes from the server: only a plain extension reaches the file system
    spooled = SpoolFile(spool, stem or attachment.kind, suffix)
    try:
        spooled.write(attachment.data)
        spooled.finish(len(attachment.data))
    except BaseException:
        spooled.discard()
        raise
    return spooled.artifact(ArtifactType.TOOL_OUTPUT, attachment.name, attachment.mime_type)
