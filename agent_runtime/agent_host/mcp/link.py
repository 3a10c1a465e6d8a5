"""A session's MCP servers as the loop and the JSON-RPC methods see them (seed 003 §9).

The tool runtime's MCP client (:class:`contracts.mcp_boundary.McpServers`) connects in the background
from the moment the session exists. Its tools reach the model between steps only — never mid-step:
before each step the link waits (bounded) for the first connection attempts, asks the client to take
the changes servers announced (``notifications/tools/list_changed``) and retry servers whose backoff ran
out, and when the registered tools changed, hands the new set to the dispatch and re-renders the
session's tools.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from agent_runtime.agent_host.routing import ToolDispatch
from contracts.mcp import McpServerState
from contracts.mcp_boundary import McpServers
from contracts.methods import AnswerElicitationParams, AnswerElicitationResult

from .elicitation import ElicitationBroker

__all__ = ["DEFAULT_START_WAIT_S", "McpLink"]

logger = logging.getLogger(__name__)

DEFAULT_START_WAIT_S = 15.0
"""How long the first step waits for servers still connecting; later ones join between later steps."""


class McpLink:
    def __init__(
        self,
        servers: McpServers,
        broker: ElicitationBroker,
        *,
        dispatch: ToolDispatch,
        start_wait_s: float = DEFAULT_START_WAIT_S,
    ) -> None:
        self.servers = servers
        self.broker = broker
        self._dispatch = dispatch
        self._start_wait_s = start_wait_s
        self._waited = False
        self.on_tools_changed: Callable[[], None] | None = None
        """Set by the session: re-render the tools of the running task."""
        dispatch.attach_mcp(servers)

    def start(self) -> None:
        self.servers.start()

    async def before_step(self) -> bool:
        """Take the servers' tools as they are now; True when they changed."""
        changed = False
        try:
            if not self._waited:
                self._waited = True
                await self.servers.wait_started(self._start_wait_s)
                changed = True
            changed = await self.servers.refresh() or changed
        except Exception:  # a bug in the MCP client must not fail the task: its tools stay as they were
            logger.exception("refreshing the MCP servers' tools failed")
        if changed:
            self._dispatch.refresh_tools()
            if self.on_tools_changed is not None:
                self.on_tools_changed()
        return changed

    def states(self) -> list[McpServerState]:
        return self.servers.states()

    def answer(self, params: AnswerElicitationParams) -> AnswerElicitationResult:
        return self.broker.answer(params)

    async def aclose(self) -> None:
        """Session end (seed 003 §9.2 step 5): pending questions cancelled, every session closed."""
        self.broker.close()
        await self.servers.aclose()
