"""What the agent host and the tool runtime's MCP client hand each other, in-process (seed 003 §9).

Like the ``ToolRouter`` types of :mod:`contracts.tools`, these cross the boundary between
``agent_runtime.agent_host`` and ``agent_runtime.tool_runtime``, which never import each other. The
host builds an :class:`McpSetup` — the bundle's servers and allowlist, the project folders, and
:class:`McpHooks` back into the session (events, elicitation, the command policy for local servers) —
and the composition root turns it into :class:`McpServers`: the tool runtime's MCP client, which is
also the ``ToolRouter`` of the MCP tools it registered.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from contracts._base import WireModel
from contracts.events import EventType
from contracts.mcp import ElicitationAction, McpServerConfig, McpServerState
from contracts.tools import ReadScope, ToolArtifact, ToolDefinition, ToolRequest, ToolResult
from contracts.urls import RedirectCheck

__all__ = [
    "ElicitationAsk",
    "ElicitationReply",
    "LocalCommandCheck",
    "McpEmit",
    "McpHooks",
    "McpServers",
    "McpServersFactory",
    "McpSetup",
]


@dataclass(frozen=True, slots=True)
class ElicitationAsk:
    """A server's request for input during a tool call, to be put to the user."""

    server_name: str
    message: str
    requested_schema: dict[str, Any]
    problems: Callable[[dict[str, Any]], list[str]] | None = None
    """What is wrong with an accepted answer's content (empty: nothing); the host refuses such an
    answer so the user can correct it."""
    tool_name: str | None = None
    """The tool as its server names it, when the request could be tied to one running call."""
    tool_call_id: str | None = None
    task_id: str | None = None
    step_id: str | None = None


@dataclass(frozen=True, slots=True)
class ElicitationReply:
    action: ElicitationAction
    content: dict[str, Any] | None = None


class McpEmit(Protocol):
    """``EventEmitter.emit``: never blocks, never raises. The host's approval gate and elicitation
    broker take it too (``approval.EmitFn``)."""

    def __call__(
        self,
        event_type: EventType,
        payload: Mapping[str, Any] | WireModel | None = None,
        *,
        task_id: str | None = None,
        step_id: str | None = None,
    ) -> None: ...


LocalCommandCheck = Callable[[Sequence[str], str | None], str | None]
"""Asked before a local (stdio) server starts, with its command line and working directory: ``None``
when the policy's command rules for ``RunCommand`` allow it as it stands, else the reason it may not
start."""


@dataclass(frozen=True, slots=True)
class McpHooks:
    emit: McpEmit
    """``mcp_server_state_changed``, ``mcp_progress``, ``mcp_authorization_required``,
    ``mcp_config_warning``."""
    elicit: Callable[[ElicitationAsk], Awaitable[ElicitationReply]]
    """Puts the request to the user (``elicitation_requested``) and waits for the answer or the
    timeout; never raises but for cancellation."""
    check_local_command: LocalCommandCheck


@dataclass(frozen=True, slots=True)
class McpSetup:
    session_id: str
    servers: tuple[McpServerConfig, ...]
    """The policy bundle's servers; the project's ``.cowork/mcp.json`` is read by the tool runtime."""
    allowed_tool_names: tuple[str, ...]
    """``Mcp.Invoke``'s ``allowedToolNames``; empty when the capability is not granted."""
    allow_local_servers: bool
    workspace_paths: tuple[str, ...]
    environ: Mapping[str, str]
    hooks: McpHooks
    call_timeout_s: float = 120.0
    """Seed 000 §7.4's limit for remote tools; the host applies it too."""
    elicitation_timeout_s: float = 100.0
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Settings for tests and diagnostics (e.g. ``backoff_s``); unknown keys are ignored."""


class McpServers(Protocol):
    """The MCP client of one session: its servers, and the ``ToolRouter`` of their registered tools.

    Tools change only in :meth:`refresh` — which the host calls between steps, never during one — so
    the tools a step's model saw are the tools its calls reach.
    """

    def start(self) -> None:
        """Begin connecting to every usable server, in tasks of its own; returns at once."""
        ...

    async def wait_started(self, timeout_s: float) -> None:
        """Until every server's first connection attempt settled (connected, failed, or waiting for the
        user to sign in), at most ``timeout_s``."""
        ...

    async def refresh(self) -> bool:
        """Between steps: re-list the tools of servers that announced ``tools/list_changed``, retry
        servers whose backoff ran out. True when the registered tools changed."""
        ...

    def states(self) -> list[McpServerState]: ...

    def get_available_tools(self) -> list[ToolDefinition]: ...

    def is_destructive(self, tool_name: str) -> bool:
        """Whether the server does not say the tool is harmless (MCP tool annotations' defaults)."""
        ...

    async def execute(
        self,
        request: ToolRequest,
        *,
        check_redirect: RedirectCheck | None = None,
        read_scope: ReadScope | None = None,
    ) -> ToolResult: ...

    def release_artifacts(self, artifacts: Sequence[ToolArtifact]) -> None: ...

    def wire_name(self, tool_name: str) -> str:
        """The name an MCP tool (``server/tool``) has on the LLM wire."""
        ...

    def internal_name(self, wire_name: str) -> str | None:
        """The MCP tool a wire name stands for, or ``None`` when it stands for none."""
        ...

    async def aclose(self) -> None:
        """Close every session (``DELETE``), stop local servers, remove spooled files."""
        ...


McpServersFactory = Callable[[McpSetup], McpServers]
"""The composition root's: imports the MCP client only when a session has servers to use."""
