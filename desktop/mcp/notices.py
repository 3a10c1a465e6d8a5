"""What the conversation says about its MCP servers, in words. Qt-free.

The texts for a running tool's progress (``mcp_progress``), for a server that became unavailable or
came back (``mcp_server_state_changed``) and for a server configuration that was not used
(``mcp_config_warning``). Wire text is collapsed to one line and cut to a readable length.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from desktop.i18n import translate

__all__ = [
    "PROGRESS_CHARS",
    "available_again_text",
    "config_warning_text",
    "progress_text",
    "unavailable_text",
]

PROGRESS_CHARS = 120
"""The longest progress text a tool row shows."""


def _line(value: Any, limit: int) -> str:
    if not isinstance(value, str):
        return ""
    text = " ".join(value.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def progress_text(payload: Mapping[str, Any]) -> str:
    """``3 of 10 · Fetching pages``, ``40% · Indexing``, ``Fetching pages``; ``""`` when it says
    nothing readable."""
    progress, total = _number(payload.get("progress")), _number(payload.get("total"))
    message = _line(payload.get("message"), PROGRESS_CHARS)
    amount = ""
    if progress is not None and total is not None and total > 0:
        if total in (1.0, 100.0):
            amount = f"{min(100.0, progress / total * 100):.0f}%"
        else:
            amount = translate("McpServers", "{done} of {total}").format(
                done=f"{progress:g}", total=f"{total:g}"
            )
    elif progress is not None and not message:
        amount = translate("McpServers", "{done} done").format(done=f"{progress:g}")
    text = " · ".join(part for part in (amount, message) if part)
    return text if len(text) <= PROGRESS_CHARS else text[: PROGRESS_CHARS - 1] + "…"


def unavailable_text(name: str, last_error: str) -> str:
    why = _line(last_error, 300).rstrip(".")
    if why:
        return translate(
            "McpServers",
            "The MCP server {name} is unavailable: {reason}. Its tools answer with an error for now; Cowork"
            " tries it again on a later call.",
        ).format(name=name, reason=why)
    return translate(
        "McpServers",
        "The MCP server {name} is unavailable. Its tools answer with an error for now; Cowork tries it again"
        " on a later call.",
    ).format(name=name)


def available_again_text(name: str) -> str:
    return translate("McpServers", "The MCP server {name} is available again.").format(name=name)


def config_warning_text(payload: Mapping[str, Any]) -> str:
    message = _line(payload.get("message"), 400).rstrip(".") or translate(
        "McpServers", "a server configuration was not used"
    )
    where = _line(payload.get("path"), 300)
    if where:
        return translate("McpServers", "MCP configuration not used (in {file}): {problem}.").format(
            file=where, problem=message
        )
    if payload.get("source") == "policy":
        return translate(
            "McpServers", "MCP configuration not used (in your organisation's policy): {problem}."
        ).format(problem=message)
    return translate("McpServers", "MCP configuration not used: {problem}.").format(problem=message)
