"""Showing the authorization page: the ``prompt`` a caller hands to ``oauth_auth``."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from agent_runtime.tool_runtime.mcp.errors import McpAuthorizationError
from agent_runtime.tool_runtime.mcp.oauth.urls import for_display

__all__ = ["AuthorizationPrompt", "open_in_browser"]

logger = logging.getLogger(__name__)

AuthorizationPrompt = Callable[[str], Awaitable[None]]
"""Given the authorization URL, show it to the person (the desktop opens the system browser)."""


async def open_in_browser(url: str) -> None:
    """Open ``url`` in the system browser. Raises ``McpAuthorizationError`` when there is none."""
    import webbrowser  # imported on use: it probes the environment for browsers on import

    # webbrowser blocks while it launches the browser process.
    opened = await asyncio.to_thread(webbrowser.open, url)
    if not opened:
        raise McpAuthorizationError(
            401,
            f"no web browser could be opened to sign in at {for_display(url)}; authorize this MCP server "
            "from the Cowork app instead",
        )
    logger.info("opened the system browser at %s", for_display(url))
