"""Tool routing: how the agent host reaches the tools (seed 000 §7).

The host depends only on the :class:`ToolRouter` protocol below; the tool runtime
(``agent_runtime.tool_runtime``) implements it, and one composition root wires the two together.
Neither package imports the other (DESIGN.md boundaries, checked by import-linter).
"""

from agent_runtime.agent_host.routing.protocol import ToolRouter

__all__ = ["ToolRouter"]
