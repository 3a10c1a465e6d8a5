"""MCP servers in the runtime (seed 003 §9.1–§9.5): where they come from (``config``), how each is
reached (``sessions``) and followed through the session (``server``), which tools are registered
(``tools``), what their answers become (``results``), and the manager the agent host drives
(``manager``). Loaded only for sessions that have MCP servers configured.
"""

from __future__ import annotations

from .manager import McpManager

__all__ = ["McpManager"]
