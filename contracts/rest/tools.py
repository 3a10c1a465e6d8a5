"""Backend Tool Service payloads: remote tools the runtime reaches through ``BackendTool.Invoke`` (seed 001
§1, §5; seed 000 §7.4, §7.6).

* ``GET /tools`` → :class:`BackendToolList`: the :class:`~contracts.tools.ToolDefinition` of every tool
  the caller's tenant policy allows — the ``BackendTool.Invoke`` grant's ``allowedToolNames`` (no grant:
  none; a grant without the list: every tool the service has).
* ``POST /tools/{toolName}/invoke`` → :class:`InvokeToolRequest` → a standard
  :class:`~contracts.tools.ToolResult`. The tool ran: ``status`` ``succeeded`` with ``outputText`` (and
  ``artifacts`` with inline ``text`` for the runtime to upload, seed 000 §7.5), or ``failed`` with an
  ``error`` (``TOOL_EXECUTION_TIMEOUT`` past the 120 s budget of §7.4, enforced by the service). The
  call was refused, in the error shape: 400 ``INVALID_REQUEST`` (arguments that do not fit the tool's
  ``inputSchema``, the field named as ``arguments.…``), 403 ``CAPABILITY_DENIED`` (the tenant's policy
  does not allow the tool), 404 ``TOOL_NOT_FOUND`` or ``SESSION_NOT_FOUND`` (not the caller's session).

The tenant and the workspace come from the bearer token and the session, never from the arguments.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Any

from pydantic import Field

from contracts._base import WireModel
from contracts.rest._fields import Identifier
from contracts.tools import ToolDefinition

__all__ = [
    "REMOTE_TOOL_NAME",
    "BackendToolList",
    "BackendToolName",
    "InvokeToolRequest",
    "WebFetchArguments",
    "WorkspaceSearchArguments",
    "is_remote_tool_name",
]

REMOTE_TOOL_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")
"""A remote tool's name: what every LLM provider accepts as a tool name, and one URL path segment. No
``/``, which names an MCP server's tool (``"server/tool"``)."""


def is_remote_tool_name(name: str) -> bool:
    return REMOTE_TOOL_NAME.fullmatch(name) is not None


class BackendToolName(StrEnum):
    """The tools the Backend Tool Service serves, by the names the LLM uses."""

    WORKSPACE_SEARCH = "WorkspaceSearch"
    WEB_FETCH = "WebFetch"


class BackendToolList(WireModel):
    tools: list[ToolDefinition]


class InvokeToolRequest(WireModel):
    session_id: Identifier
    """The caller's session: the workspace a tool works in is this session's."""
    task_id: Identifier
    step_id: Identifier
    tool_call_id: Identifier | None = None
    arguments: dict[str, Any]
    """Checked against the tool's ``inputSchema`` by the service."""


class WorkspaceSearchArguments(WireModel):
    """WorkspaceSearch: full-text search over this workspace's past conversations and text artifacts."""

    query: str = Field(
        min_length=1,
        max_length=500,
        description='Words to look for; "quoted words" must appear together. Results match any word, '
        "best matches first.",
    )
    limit: int = Field(default=10, ge=1, le=50, description="How many results, 1 to 50. Default: 10")
    session_id: Identifier | None = Field(
        default=None, description="Only this session's messages and artifacts. Default: every session"
    )


class WebFetchArguments(WireModel):
    """WebFetch: a public web page, fetched by the backend and returned as readable Markdown."""

    url: str = Field(min_length=1, max_length=8192, description="The page's URL (http or https)")
    max_chars: int = Field(
        default=20_000,
        ge=500,
        le=100_000,
        description="At most this many characters of Markdown in the answer, 500 to 100000. Default: "
        "20000; a longer page is cut here and kept whole as an artifact",
    )
    timeout_seconds: int = Field(
        default=30, ge=1, le=120, description="How long the fetch may take, 1 to 120 seconds. Default: 30"
    )
