"""One configured MCP server through a session (seed 003 §9.2, §9.3): connect, list, register, call,
refresh, close — and its state, as the desktop shows it (``mcp_server_state_changed``).

* The first connection runs in the background from the session's start. A server the configuration or
  the policy rules out (local servers not allowed, a command the policy refuses, no allowlisted tool, a
  token variable that is not set, an insecure URL) is shown ``unavailable`` with the reason and never
  contacted. One that cannot be reached is shown ``unavailable`` and tried again between steps, once
  its backoff ran out.
* Tools are *staged* when listed and *registered* only by :meth:`ServerConnection.refresh`, which the
  host calls between steps: a ``tools/list_changed`` mid-step never changes what that step can call.
* Calls: a server that failed ``failures_to_mark`` calls in a row is unavailable — its tools answer at
  once with a clear error, and the loop goes on — until its backoff ran out; the next call then tries
  it again (``ServerHealth``). Timeouts are seed 000 §7.4's 120 s.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agent_runtime.tool_runtime.mcp.availability import ServerHealth
from agent_runtime.tool_runtime.mcp.elicitation import (
    ElicitationAnswer,
    ElicitationHandler,
    ElicitationRequest,
    validate_answer,
)
from agent_runtime.tool_runtime.mcp.errors import McpError, McpProtocolError, McpTimeout
from contracts.events import EventType, McpAuthorizationRequiredPayload, McpProgressPayload
from contracts.mcp import McpRejectedTool, McpServerState, McpServerStatus, McpTransport
from contracts.mcp_boundary import ElicitationAsk, McpSetup
from contracts.tools import ToolRequest

from .config import ConfiguredServer
from .sessions import ServerRefused, open_session_for
from .tools import RegisteredTool, register_tools

if TYPE_CHECKING:
    from agent_runtime.tool_runtime.mcp.protocol import McpProtocolSession, Progress

__all__ = ["RELIST_TIMEOUT_S", "CallFailed", "ServerConnection"]

logger = logging.getLogger(__name__)

RELIST_TIMEOUT_S = 10.0
"""How long the start of a step waits for a server re-listing its tools after ``list_changed``."""


class CallFailed(Exception):
    """A call that did not get the tool's result; ``timeout`` when it ran out of time."""

    def __init__(self, message: str, *, timeout: bool = False) -> None:
        super().__init__(message)
        self.timeout = timeout


class ServerConnection:
    def __init__(
        self,
        configured: ConfiguredServer,
        *,
        setup: McpSetup,
        backoff_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.configured = configured
        self.config = configured.config
        self.name = configured.config.name
        self._setup = setup
        self._emit = setup.hooks.emit
        self._backoff_s = backoff_s
        self._clock = clock
        self.health = ServerHealth(backoff_s=backoff_s, clock=clock)
        self.status = McpServerStatus.CONNECTING
        self.last_error: str | None = None
        self.refused: str | None = None
        self.protocol_version: str | None = None
        self.session: McpProtocolSession | None = None
        self.registered: dict[str, RegisteredTool] = {}
        self.left_out: list[McpRejectedTool] = []
        self._staged: tuple[list[RegisteredTool], list[McpRejectedTool]] | None = None
        self._stale = False
        self._next_connect_at = 0.0
        self._connecting: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        self._running_calls: dict[str, ToolRequest] = {}
        self._closing: set[asyncio.Task[None]] = set()
        self._shown: McpServerState | None = None
        self.settled = asyncio.Event()
        """Set when the first connection attempt is over: connected, failed, refused, or waiting for
        the user to sign in."""
        allowed = [pattern for pattern in setup.allowed_tool_names if pattern.partition("/")[0] == self.name]
        self.allowed = tuple(allowed)
        if not setup.allowed_tool_names:
            self.refused = "the policy does not grant Mcp.Invoke, so none of its tools may be used"
        elif not allowed:
            self.refused = (
                f"the policy allows none of its tools (Mcp.Invoke allowedToolNames has no {self.name}/…"
                " entry)"
            )

    # ------------------------------------------------------------------ state

    def state(self) -> McpServerState:
        if self.config.transport is McpTransport.STDIO:
            shown_url = self.config.command[0] if self.config.command else None
        else:
            shown_url = self.config.url
        staged = self._staged
        count = len(staged[0]) if staged is not None else len(self.registered)
        left_out = staged[1] if staged is not None else self.left_out
        return McpServerState(
            name=self.name,
            url=shown_url,
            state=self.status,
            tool_count=count if self.status is McpServerStatus.CONNECTED else len(self.registered),
            last_error=self.last_error,
            protocol_version=self.protocol_version,
            transport=self.config.transport,
            source=self.configured.source,
            rejected_tools=list(left_out) or None,
        )

    def _set(self, status: McpServerStatus, error: str | None = None) -> None:
        self.status = status
        self.last_error = error
        self._announce()

    def _announce(self) -> None:
        state = self.state()
        if state != self._shown:
            self._shown = state
            self._emit(EventType.MCP_SERVER_STATE_CHANGED, state)

    # ------------------------------------------------------------------ connecting

    def start(self) -> None:
        if self.refused is not None:
            self._refuse(self.refused)
            return
        self._announce()
        self._connect_in_background()

    def _refuse(self, reason: str) -> None:
        self.refused = reason
        logger.warning("MCP server %s is not used: %s", self.name, reason)
        self._set(McpServerStatus.UNAVAILABLE, f"Not used: {reason}.")
        self.settled.set()

    def _connect_in_background(self) -> None:
        self._connecting = asyncio.create_task(self._connect(), name=f"mcp-connect-{self.name}")

    async def _connect(self) -> None:
        async with self._lock:
            if self.session is not None or self.refused is not None:
                return
            if self.status is not McpServerStatus.CONNECTING:
                self._set(McpServerStatus.CONNECTING, self.last_error)
            try:
                session = open_session_for(
                    self.config,
                    environ=self._setup.environ,
                    allow_local_servers=self._setup.allow_local_servers,
                    check_local_command=self._setup.hooks.check_local_command,
                    workspace_paths=self._setup.workspace_paths,
                    elicitation=self._elicitation(None),
                    on_tools_changed=self._tools_changed,
                    authorization_prompt=self._authorization_required,
                    call_timeout_s=self._setup.call_timeout_s,
                )
            except (ServerRefused, McpError) as exc:
                self._refuse(str(exc).rstrip("."))
                return
            try:
                info = await session.open()
                raw_tools = await session.list_tools()
            except (asyncio.CancelledError, KeyboardInterrupt):
                await session.aclose()
                raise
            except Exception as exc:
                await session.aclose()
                if not isinstance(exc, McpError):
                    # A bug below us, not the server's fault: logged whole, shown in a sentence.
                    logger.exception("connecting to MCP server %s failed unexpectedly", self.name)
                self._next_connect_at = self._clock() + self._backoff_s
                logger.warning("MCP server %s cannot be used now: %s", self.name, exc)
                self._set(McpServerStatus.UNAVAILABLE, str(exc) or type(exc).__name__)
                self.settled.set()
                return
            self.session = session
            self.protocol_version = info.protocol_version
            self._stage(raw_tools)
            self.health.succeeded()
            self._set(McpServerStatus.CONNECTED)
            self.settled.set()

    async def _authorization_required(self, url: str) -> None:
        """OAuth: the user must sign in at ``url``; the desktop opens it, ``cowork exec`` prints it."""
        self._set(McpServerStatus.AUTHORIZING)
        self._emit(
            EventType.MCP_AUTHORIZATION_REQUIRED,
            McpAuthorizationRequiredPayload(server_name=self.name, authorization_url=url),
        )
        self.settled.set()  # the first step does not wait for a person

    def _tools_changed(self) -> None:
        # notifications/tools/list_changed: re-listed between steps, never during one.
        self._stale = True

    def _stage(self, raw_tools: list[dict[str, Any]]) -> None:
        registered, left_out, malformed = register_tools(self.name, raw_tools, self.allowed)
        for tool in malformed:
            logger.warning("MCP server %s: tool %s rejected: %s", self.name, tool.tool_name, tool.reason)
        self._staged = (registered, left_out)

    # ------------------------------------------------------------------ between steps

    async def refresh(self) -> bool:
        """Take what changed since the last step; True when the registered tools changed."""
        session = self.session
        if self._stale and session is not None and self.refused is None:
            self._stale = False
            try:
                # Bounded: the next step waits for this. A server too slow to list is asked again
                # before the step after, and keeps its tools meanwhile.
                async with asyncio.timeout(RELIST_TIMEOUT_S):
                    self._stage(await session.list_tools())
            except (McpError, TimeoutError) as exc:
                why = str(exc) or f"no answer to tools/list within {RELIST_TIMEOUT_S:g} s"
                logger.warning("MCP server %s: re-listing its tools failed: %s", self.name, why)
                self.health.failed(why)
                self._stale = True
        elif (
            session is None
            and self.refused is None
            and (self._connecting is None or self._connecting.done())
            and self.status is not McpServerStatus.CLOSED
            and self._clock() >= self._next_connect_at
        ):
            self._connect_in_background()
        staged, self._staged = self._staged, None
        if staged is None:
            return False
        before = {name: tool.definition for name, tool in self.registered.items()}
        self.registered = {tool.spec.qualified_name: tool for tool in staged[0]}
        self.left_out = staged[1]
        self._announce()
        return before != {name: tool.definition for name, tool in self.registered.items()}

    # ------------------------------------------------------------------ calls

    async def call(
        self, tool: RegisteredTool, arguments: dict[str, Any], request: ToolRequest
    ) -> dict[str, Any]:
        """The raw ``CallToolResult``; :class:`CallFailed` when the server gave none."""
        if not self.health.may_try():
            wait = self.health.seconds_until_retry()
            why = self.health.last_error or "it failed repeatedly"
            raise CallFailed(
                f"The MCP server {self.name} is unavailable ({why}); it will be tried again in"
                f" {max(1, round(wait))} s. Carry on without it or try later."
            )
        session = await self._session_for_call()
        call_id = request.tool_call_id or f"{request.step_id}:{tool.spec.tool_name}"
        self._running_calls[call_id] = request
        try:
            raw = await session.call_tool(
                tool.spec.tool_name,
                dict(arguments),
                on_progress=self._progress(tool, request),
                elicitation=self._elicitation(request),
            )
        except McpProtocolError as exc:
            # The server answered: it is up, the call itself was refused.
            self._succeeded()
            raise CallFailed(str(exc)) from None
        except McpTimeout as exc:
            self._failed(str(exc))
            raise CallFailed(str(exc), timeout=True) from None
        except McpError as exc:
            self._failed(str(exc))
            raise CallFailed(str(exc)) from None
        finally:
            self._running_calls.pop(call_id, None)
        self._succeeded()
        return raw

    async def _session_for_call(self) -> McpProtocolSession:
        if self.session is not None:
            return self.session
        # Dropped after failing repeatedly (or never up): this call is the trial of a new session.
        await self._connect()
        if self.session is None:
            self.health.failed(self.last_error or "it cannot be reached")
            raise CallFailed(f"The MCP server {self.name} cannot be reached: {self.last_error}")
        return self.session

    def _succeeded(self) -> None:
        was = self.health.available
        self.health.succeeded()
        if not was or self.status is not McpServerStatus.CONNECTED:
            self._set(McpServerStatus.CONNECTED)

    def _failed(self, error: str) -> None:
        self.health.failed(error)
        if not self.health.available and self.status is not McpServerStatus.UNAVAILABLE:
            logger.warning("MCP server %s marked unavailable: %s", self.name, error)
            self._set(McpServerStatus.UNAVAILABLE, error)
            # A new session when it is tried again: a local server may have died, a remote one restarted.
            session, self.session = self.session, None
            if session is not None:
                closing = asyncio.create_task(session.aclose())
                self._closing.add(closing)
                closing.add_done_callback(self._closing.discard)
            self._next_connect_at = self._clock() + self._backoff_s

    def _progress(self, tool: RegisteredTool, request: ToolRequest) -> Callable[[Progress], None]:
        def progress(update: Progress) -> None:
            self._emit(
                EventType.MCP_PROGRESS,
                McpProgressPayload(
                    server_name=self.name,
                    tool_name=tool.spec.tool_name,
                    tool_call_id=request.tool_call_id,
                    progress=update.progress,
                    total=update.total,
                    message=update.message,
                ),
                task_id=request.task_id,
                step_id=request.step_id,
            )

        return progress

    def _elicitation(self, request: ToolRequest | None) -> ElicitationHandler:
        elicit = self._setup.hooks.elicit

        async def handler(asked: ElicitationRequest) -> ElicitationAnswer:
            schema = asked.requested_schema
            running = request
            if running is None and len(self._running_calls) == 1:
                # Asked outside a call's stream while exactly one call runs: that call is the one.
                running = next(iter(self._running_calls.values()))
            reply = await elicit(
                ElicitationAsk(
                    server_name=self.name,
                    message=asked.message,
                    requested_schema=schema,
                    problems=lambda content: validate_answer(schema, content),
                    tool_name=asked.tool_name,
                    tool_call_id=running.tool_call_id if running is not None else None,
                    task_id=running.task_id if running is not None else None,
                    step_id=running.step_id if running is not None else None,
                )
            )
            return ElicitationAnswer(reply.action.value, reply.content)

        return handler

    # ------------------------------------------------------------------ the end

    async def aclose(self) -> None:
        if self._connecting is not None and not self._connecting.done():
            self._connecting.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._connecting
        if self._closing:
            await asyncio.wait(set(self._closing), timeout=5)
        session, self.session = self.session, None
        if session is not None:
            try:
                await session.aclose()
            except McpError as exc:
                logger.info("Closing the session with MCP server %s: %s", self.name, exc)
        if self.refused is None:
            self._set(McpServerStatus.CLOSED)
