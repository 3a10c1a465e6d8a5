"""What every built-in tool is: a strict arguments model, a description, and ``run``.

The arguments model is the single source of truth for a tool's input: ``get_available_tools`` sends
the JSON Schema generated from it to the LLM, and the router validates every call against the same
model (strictly, as JSON: ``"5"`` is not an integer), so schema and validation cannot disagree.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar, Generic, TypeVar

from pydantic import ConfigDict

from agent_runtime.tool_runtime.output.artifacts import Spool
from agent_runtime.tool_runtime.output.results import ToolOutput
from agent_runtime.tool_runtime.platform.base import Platform
from agent_runtime.tool_runtime.tools.ledger import ReadLedger
from contracts._base import WireModel
from contracts.enums import Capability
from contracts.tools import ReadScope, ToolDefinition
from contracts.urls import RedirectCheck

__all__ = ["DEFAULT_MAX_OUTPUT_BYTES", "Arguments", "Tool", "ToolContext"]

#: ``maxOutputBytes`` when the request's scope gives none (seed 003 §4.4: "default 100KB").
DEFAULT_MAX_OUTPUT_BYTES = 100 * 1024


class Arguments(WireModel):
    """Base of every tool's arguments: camelCase names, unknown fields refused, no type coercion."""

    model_config = ConfigDict(frozen=True)


A = TypeVar("A", bound=Arguments)


@dataclass(frozen=True)
class ToolContext:
    """Per-call facts a tool runs with: the OS adapter, the request's scope, the artifact spool."""

    platform: Platform
    workspace_root: str | None
    max_file_size_bytes: int | None
    max_output_bytes: int
    spool: Spool
    check_redirect: RedirectCheck | None = None
    """The host's check of each redirect hop (HttpRequest); None: only the tool's own guard applies."""
    reads: ReadLedger | None = None
    """The files this session read (ReadFile) or wrote, as they were then; EditFile needs one."""
    read_scope: ReadScope | None = None
    """The policy's File.Read paths for each file ListDirectory, Glob and Grep show or read; None:
    the path the call names was the only one checked (the tool runtime used on its own)."""


class Tool(ABC, Generic[A]):
    """One built-in tool (seed 003 §4)."""

    name: ClassVar[str]
    capability: ClassVar[Capability]
    description: ClassVar[str]
    arguments: type[A]

    @abstractmethod
    async def run(self, args: A, context: ToolContext) -> ToolOutput:
        """Do the work; raise ``ToolFailure`` for anything the caller should see as a failed result."""

    async def aclose(self) -> None:
        """Release what the tool holds across calls (connections); most tools hold nothing."""
        return

    def definition(self) -> ToolDefinition:
        return ToolDefinition.for_arguments(self.name, self.description, self.arguments)
