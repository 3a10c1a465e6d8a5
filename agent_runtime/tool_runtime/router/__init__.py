"""The ``ToolRouter`` implementation, its registry and dispatch (seed 003 §3)."""

from __future__ import annotations

from agent_runtime.tool_runtime.router.local import LocalToolRouter
from agent_runtime.tool_runtime.router.registry import ToolRegistry, builtin_tools

__all__ = ["LocalToolRouter", "ToolRegistry", "builtin_tools"]
