"""What every tool of the Backend Tool Service is: a strict arguments model, a description and ``run``.

The arguments model is the one source of the tool's ``inputSchema`` (served by ``GET /tools``) and of
the validation of every call, so the two cannot disagree — as for the runtime's built-in tools.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import ClassVar, Generic, TypeVar

from backend.common.auth import Principal
from contracts._base import WireModel
from contracts.errors import ErrorCode
from contracts.tools import ToolArtifact, ToolDefinition

__all__ = ["BackendTool", "ToolCall", "ToolFailed", "ToolOutput"]

A = TypeVar("A", bound=WireModel)


@dataclass(frozen=True, slots=True)
class ToolCall:
    """Who calls, and where: from the bearer token and the caller's session, never from arguments."""

    principal: Principal
    workspace_id: str
    session_id: str
    task_id: str
    step_id: str


@dataclass(frozen=True, slots=True)
class ToolOutput:
    text: str
    artifacts: list[ToolArtifact] = field(default_factory=list)
    """Output kept whole (inline ``text``) for the runtime to upload to the Workspace Service."""


class ToolFailed(Exception):
    """The tool ran and could not do what was asked: a ``failed`` ToolResult the model sees."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class BackendTool(ABC, Generic[A]):
    name: ClassVar[str]
    description: ClassVar[str]
    arguments: type[A]

    @abstractmethod
    async def run(self, call: ToolCall, args: A) -> ToolOutput:
        """Do the work; raise :class:`ToolFailed` for what the model should see as a failed result."""

    def definition(self) -> ToolDefinition:
        return ToolDefinition.for_arguments(self.name, self.description, self.arguments)
