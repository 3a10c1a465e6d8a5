"""The routing package's exceptions. They stay inside it: ``ToolDispatch`` turns each into a failed
``ToolResult`` with the seed's code, so the loop never sees them.

    RoutingError
    └── PathRejected   a path argument that cannot be resolved or is not acceptable
"""

from __future__ import annotations

__all__ = ["PathRejected", "RoutingError"]


class RoutingError(Exception):
    """Root of the routing package's errors."""


class PathRejected(RoutingError):
    """A path argument the host will not hand to a tool; the message names the argument and why."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field} {problem}")
        self.field = field
        self.problem = problem
