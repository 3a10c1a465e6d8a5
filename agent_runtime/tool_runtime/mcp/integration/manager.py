"""The MCP client of one session (seed 003 §9): every configured server, and the ``ToolRouter`` of the
tools they registered — :class:`contracts.mcp_boundary.McpServers`, which the composition root hands
the agent host.

A call of an MCP tool goes through the host's usual path — policy check, approval, the host's timeout
(seed 000 §7.4: 120 s), artifact upload — and arrives here as a ``ToolRequest``: its arguments are
checked against the tool's input schema before the server sees anything, the server's answer is
translated (text, artifacts, ``isError``, ``structuredContent`` against ``outputSchema``), and a
failure of the server is a failed result the model reads, never an exception.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from agent_runtime.tool_runtime.mcp.manifest import WireNames
from agent_runtime.tool_runtime.mcp.results import translate_result
from agent_runtime.tool_runtime.output.artifacts import Spool
from agent_runtime.tool_runtime.output.results import failed_result
from contracts.errors import ErrorCode
from contracts.events import EventType, McpConfigWarningPayload
from contracts.mcp import McpServerState
from contracts.mcp_boundary import McpSetup
from contracts.tools import ReadScope, ToolArtifact, ToolDefinition, ToolRequest, ToolResult
from contracts.urls import RedirectCheck

from .config import ConfigProblem, load_servers
from .results import tool_result
from .server import CallFailed, ServerConnection
from .tools import RegisteredTool, argument_problems

__all__ = ["McpManager"]

logger = logging.getLogger(__name__)

DEFAULT_BACKOFF_S = 30.0


class McpManager:
    """See the module docstring. Built by the composition root, started by the host."""

    def __init__(self, setup: McpSetup) -> None:
        self._setup = setup
        configured, self._problems = load_servers(setup.servers, setup.workspace_paths)
        backoff = setup.extra.get("backoff_s", DEFAULT_BACKOFF_S)
        backoff_s = float(backoff) if isinstance(backoff, int | float) else DEFAULT_BACKOFF_S
        self._servers = [ServerConnection(entry, setup=setup, backoff_s=backoff_s) for entry in configured]
        self._tools: dict[str, tuple[ServerConnection, RegisteredTool]] = {}
        self._names = WireNames()
        self._spool = Spool()
        self._closed = False

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        for problem in self._problems:
            self._warn(problem)
        for server in self._servers:
            server.start()

    def _warn(self, problem: ConfigProblem) -> None:
        self._setup.hooks.emit(
            EventType.MCP_CONFIG_WARNING,
            McpConfigWarningPayload(
                message=problem.message,
                source=problem.source,
                path=problem.path,
                server_name=problem.server_name,
            ),
        )

    async def wait_started(self, timeout_s: float) -> None:
        waits = [asyncio.ensure_future(server.settled.wait()) for server in self._servers]
        if not waits:
            return
        try:
            await asyncio.wait(waits, timeout=timeout_s)
        finally:
            for wait in waits:
                wait.cancel()

    async def refresh(self) -> bool:
        if self._closed:
            return False
        changes = await asyncio.gather(*(server.refresh() for server in self._servers))
        if not any(changes):
            return False
        self._tools = {
            name: (server, tool) for server in self._servers for name, tool in server.registered.items()
        }
        logger.info("MCP tools now registered: %s", ", ".join(sorted(self._tools)) or "none")
        return True

    def states(self) -> list[McpServerState]:
        return [server.state() for server in self._servers]

    async def aclose(self) -> None:
        """Seed 003 §9.2 step 5: every session closed (DELETE), local servers stopped, files removed."""
        if self._closed:
            return
        self._closed = True
        await asyncio.gather(*(server.aclose() for server in self._servers), return_exceptions=True)
        self._tools = {}
        self._spool.close()

    # ------------------------------------------------------------------ the ToolRouter of MCP tools

    def get_available_tools(self) -> list[ToolDefinition]:
        return [tool.definition.model_copy(deep=True) for _, tool in self._tools.values()]

    def is_destructive(self, tool_name: str) -> bool:
        found = self._tools.get(tool_name)
        return True if found is None else found[1].destructive

    async def execute(
        self,
        request: ToolRequest,
        *,
        check_redirect: RedirectCheck | None = None,
        read_scope: ReadScope | None = None,
    ) -> ToolResult:
        found = self._tools.get(request.tool_name)
        if found is None:
            return failed_result(request, ErrorCode.TOOL_NOT_FOUND, f"Unknown MCP tool: {request.tool_name}")
        if self._closed:
            return failed_result(request, ErrorCode.TOOL_EXECUTION_FAILED, "The MCP client has shut down")
        server, tool = found
        # Seed 003 §9.3: nothing reaches the server that its own schema refuses.
        problems = argument_problems(tool, request.arguments)
        if problems:
            return failed_result(
                request,
                ErrorCode.INVALID_REQUEST,
                f"The arguments do not fit the input schema of {request.tool_name}; nothing was sent to the"
                f" server: {'; '.join(problems)}",
            )
        try:
            raw = await server.call(tool, request.arguments, request)
            translated = translate_result(raw, tool.spec.output_schema)
            return tool_result(request, translated, self._spool)
        except CallFailed as exc:
            code = ErrorCode.TOOL_EXECUTION_TIMEOUT if exc.timeout else ErrorCode.TOOL_EXECUTION_FAILED
            return failed_result(request, code, str(exc))
        except Exception:
            # A bug of ours, not the server's: logged with its traceback, reported without it.
            logger.exception("MCP tool %s failed unexpectedly", request.tool_name)
            message = f"{request.tool_name} failed unexpectedly; see the runtime log"
            return failed_result(request, ErrorCode.INTERNAL_ERROR, message)

    def release_artifacts(self, artifacts: Sequence[ToolArtifact]) -> None:
        self._spool.release(artifact.data_path for artifact in artifacts if artifact.data_path is not None)

    # ------------------------------------------------------------------ names on the LLM wire

    def wire_name(self, tool_name: str) -> str:
        return self._names.wire(tool_name)

    def internal_name(self, wire_name: str) -> str | None:
        known = self._names.internal(wire_name)
        if known is not None:
            return known
        # A tool the model names that was never offered (not allowlisted, or its server is down): read
        # back the plain "{server}__{tool}" form of a configured server, so that the call is refused
        # by name — by the policy, or as absent — rather than as gibberish.
        server, separator, tool = wire_name.partition("__")
        if separator and tool and any(known.name == server for known in self._servers):
            return f"{server}/{tool}"
        return None
