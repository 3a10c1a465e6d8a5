"""The MCP protocol above its transport: lifecycle, our requests, and what a server sends us.

A transport (``session.McpSession`` for streamable HTTP, ``stdio.StdioMcpSession`` for a local
program) moves JSON-RPC messages; this class is everything the two share (MCP 2025-11-25):

* lifecycle — ``initialize`` offering the newest revision we speak, accepting an older answer down to
  2025-03-26 and refusing any other (the client SHOULD then disconnect), then
  ``notifications/initialized``;
* our requests — one timeout per request (seed 000 §7.4, 120 s by default) after which the server is
  told ``notifications/cancelled``, as it is when the task awaiting the answer is cancelled; progress
  notifications delivered to the caller's callback through the ``progressToken`` sent in ``_meta``;
* the server's requests — ``ping``, and ``elicitation/create`` (form mode) answered through the
  handler; anything else is "method not found", since we declare no other client capability — and its
  notifications: progress, ``tools/list_changed``, and ``cancelled`` for a request it sent us.
"""

from __future__ import annotations

import abc
import asyncio
import importlib.metadata
import itertools
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, TypeGuard

from contracts.jsonrpc import RpcErrorCode

from .elicitation import ElicitationAnswer, ElicitationHandler, ElicitationRequest
from .errors import (
    McpError,
    McpProtocolError,
    McpResponseTooLarge,
    McpTimeout,
    McpTransportError,
    McpUnsupportedVersion,
)

__all__ = [
    "CLIENT_NAME",
    "LATEST_PROTOCOL_VERSION",
    "SUPPORTED_PROTOCOL_VERSIONS",
    "Call",
    "McpProtocolSession",
    "Message",
    "Progress",
    "ServerInfo",
    "answers",
    "parse_messages",
]

logger = logging.getLogger(__name__)

SUPPORTED_PROTOCOL_VERSIONS: Final = ("2025-11-25", "2025-06-18", "2025-03-26")
"""Newest first. 2024-11-05 is not here: its HTTP transport (HTTP+SSE) is not streamable HTTP."""
LATEST_PROTOCOL_VERSION: Final = SUPPORTED_PROTOCOL_VERSIONS[0]
CLIENT_NAME: Final = "cowork"

Message = dict[str, Any]
"""One JSON-RPC message as parsed from the wire."""

_MAX_LIST_PAGES = 1000
_CANCEL_NOTICE_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class ServerInfo:
    protocol_version: str
    name: str
    version: str
    capabilities: dict[str, Any]
    instructions: str | None


@dataclass(frozen=True)
class Progress:
    progress: float
    total: float | None
    message: str | None


@dataclass(frozen=True)
class Call:
    """One request of ours in flight: what the messages that arrive with its answer belong to."""

    request_id: int
    method: str
    tool_name: str | None = None
    on_progress: Callable[[Progress], None] | None = None
    elicitation: ElicitationHandler | None = None


def client_version() -> str:
    try:
        return importlib.metadata.version("cowork")
    except importlib.metadata.PackageNotFoundError:
        # A frozen runtime may ship without the distribution's metadata.
        return "unknown"


class McpProtocolSession(abc.ABC):
    """One session with one MCP server; subclasses provide the transport."""

    def __init__(
        self,
        server_name: str,
        *,
        elicitation: ElicitationHandler | None,
        on_tools_changed: Callable[[], None] | None,
        call_timeout_s: float,
        max_response_bytes: int,
    ) -> None:
        self.server_name = server_name
        self._elicitation = elicitation
        self._on_tools_changed = on_tools_changed
        self._call_timeout_s = call_timeout_s
        self._max_response_bytes = max_response_bytes
        self._ids = itertools.count(1)
        self._calls: dict[int, Call] = {}
        self._serving: dict[object, asyncio.Task[None]] = {}
        # The server's requests that came with the answer to one of ours, by our request's id: when
        # that request ends, nobody waits for them any more (a form still open is withdrawn).
        self._related: dict[int, set[asyncio.Task[None]]] = {}
        self._background: set[asyncio.Task[None]] = set()
        self._version: str | None = None
        self._info: ServerInfo | None = None
        self._opened = False
        self._closed = False

    # ------------------------------------------------------------------ the transport's part

    @abc.abstractmethod
    async def _connect(self) -> None:
        """Make the transport ready for the first message."""

    @abc.abstractmethod
    async def _exchange(self, message: Message, call: Call) -> Message:
        """Send a request; return the server's response to it. Other messages that arrive meanwhile
        go to :meth:`_incoming`, with ``call`` when they came with this request's answer."""

    @abc.abstractmethod
    async def _send(self, message: Message) -> None:
        """Send a notification, or our response to a server's request."""

    @abc.abstractmethod
    async def _disconnect(self) -> None:
        """End the session on the transport (idempotent)."""

    async def _session_started(self) -> None:  # noqa: B027 - a hook: most transports need nothing here
        """Called after ``notifications/initialized`` went out."""

    # ------------------------------------------------------------------ public API

    @property
    def server_info(self) -> ServerInfo | None:
        return self._info

    @property
    def protocol_version(self) -> str | None:
        return self._version

    async def open(self) -> ServerInfo:
        """Connect and initialize. On any failure the session is closed before the error propagates."""
        if self._opened or self._closed:
            raise McpError(f"The session with the MCP server {self.server_name} was already opened")
        self._opened = True
        try:
            await self._connect()
            return await self._handshake()
        except BaseException:
            await self.aclose()
            raise

    async def list_tools(self) -> list[dict[str, Any]]:
        """Every tool the server lists, following ``nextCursor`` through all pages."""
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        seen: set[str] = set()
        while True:
            result = await self._request("tools/list", {"cursor": cursor} if cursor is not None else None)
            page = result.get("tools")
            if not isinstance(page, list):
                raise McpTransportError(
                    f"The MCP server {self.server_name} answered tools/list without a list"
                )
            for tool in page:
                if isinstance(tool, dict):
                    tools.append(tool)
                else:
                    logger.warning("MCP server %s listed a tool that is not an object", self.server_name)
            cursor = result.get("nextCursor")
            # An empty cursor is read as the end, as most servers mean it.
            if cursor is None or cursor == "":
                return tools
            if not isinstance(cursor, str) or cursor in seen or len(seen) >= _MAX_LIST_PAGES:
                raise McpTransportError(
                    f"The MCP server {self.server_name} paginates tools/list without end (cursor {cursor!r})"
                )
            seen.add(cursor)

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        on_progress: Callable[[Progress], None] | None = None,
        elicitation: ElicitationHandler | None = None,
    ) -> dict[str, Any]:
        """The raw ``CallToolResult``.

        ``on_progress`` gets the server's progress notifications for this call. ``elicitation``
        overrides the session's handler for requests the server makes on this call's response stream
        (over HTTP); a handler still waiting when the call ends is cancelled. Cancelling the awaiting
        task sends ``notifications/cancelled``; a timeout raises :class:`McpTimeout` and does too.
        """
        return await self._request(
            "tools/call",
            {"name": name, "arguments": arguments},
            tool_name=name,
            on_progress=on_progress,
            elicitation=elicitation,
        )

    async def ping(self) -> None:
        await self._request("ping")

    async def aclose(self) -> None:
        """End the session (idempotent). Cancellation notices still in flight are given a moment."""
        if self._closed:
            return
        self._closed = True
        for task in self._serving.values():
            task.cancel()
        if self._background:
            await asyncio.wait(set(self._background), timeout=_CANCEL_NOTICE_TIMEOUT_S)
        await self._disconnect()

    # ------------------------------------------------------------------ lifecycle

    def _capabilities(self) -> dict[str, Any]:
        # Form mode only: URL mode would send the user to a server-chosen address, which needs a UI
        # of its own. An elicitation object with "form" is how 2025-11-25 declares it; older
        # revisions read any elicitation object as form mode.
        return {"elicitation": {"form": {}}} if self._elicitation is not None else {}

    async def _handshake(self) -> ServerInfo:
        self._version = None
        result = await self._request(
            "initialize",
            {
                "protocolVersion": LATEST_PROTOCOL_VERSION,
                "capabilities": self._capabilities(),
                "clientInfo": {"name": CLIENT_NAME, "version": client_version()},
            },
        )
        version = result.get("protocolVersion")
        if version not in SUPPORTED_PROTOCOL_VERSIONS:
            raise McpUnsupportedVersion(LATEST_PROTOCOL_VERSION, version, SUPPORTED_PROTOCOL_VERSIONS)
        assert isinstance(version, str)
        server = result.get("serverInfo")
        capabilities = result.get("capabilities")
        instructions = result.get("instructions")
        if not isinstance(server, dict) or not isinstance(capabilities, dict):
            raise McpTransportError(
                f"The MCP server {self.server_name} answered initialize without serverInfo or capabilities"
            )
        self._version = version
        self._info = ServerInfo(
            protocol_version=version,
            name=str(server.get("name", "")),
            version=str(server.get("version", "")),
            capabilities=capabilities,
            instructions=instructions if isinstance(instructions, str) else None,
        )
        await self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await self._session_started()
        return self._info

    # ------------------------------------------------------------------ our requests

    async def _request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        tool_name: str | None = None,
        on_progress: Callable[[Progress], None] | None = None,
        elicitation: ElicitationHandler | None = None,
    ) -> dict[str, Any]:
        if self._closed:
            raise McpError(f"The session with the MCP server {self.server_name} is closed")
        request_id = next(self._ids)
        call = Call(request_id, method, tool_name, on_progress, elicitation)
        message: Message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        if on_progress is not None:
            # The request id is unique among our active requests, as a progress token must be.
            message["params"] = {**(params or {}), "_meta": {"progressToken": request_id}}
        self._calls[request_id] = call
        try:
            async with asyncio.timeout(self._call_timeout_s):
                response = await self._exchange(message, call)
        except TimeoutError:
            self._tell_cancelled(call, "the client's timeout expired")
            raise McpTimeout(method, self._call_timeout_s) from None
        except asyncio.CancelledError:
            self._tell_cancelled(call, "the client cancelled the request")
            raise
        except McpResponseTooLarge:
            self._tell_cancelled(call, "the response is larger than the client accepts")
            raise
        except McpTransportError:
            # The server may still be working on it: a broken connection is not a cancellation
            # (2025-11-25 transports), so say that we stopped waiting.
            self._tell_cancelled(call, "the client stopped waiting after a transport error")
            raise
        finally:
            del self._calls[request_id]
            for task in self._related.pop(request_id, ()):
                task.cancel()
        return self._result(response, method)

    def _result(self, response: Message, method: str) -> dict[str, Any]:
        error = response.get("error")
        if error is not None:
            if not isinstance(error, dict):
                raise McpTransportError(
                    f"The MCP server {self.server_name} sent a malformed error for {method}"
                )
            code = error.get("code")
            raise McpProtocolError(
                code if isinstance(code, int) else RpcErrorCode.INTERNAL_ERROR,
                str(error.get("message", "")),
                error.get("data"),
            )
        result = response.get("result")
        if not isinstance(result, dict):
            raise McpTransportError(
                f"The MCP server {self.server_name} answered {method} without a result object"
            )
        return result

    def _tell_cancelled(self, call: Call, reason: str) -> None:
        # The initialize request MUST NOT be cancelled (MCP cancellation); the session is dropped instead.
        if self._closed or call.method == "initialize":
            return
        notice = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": call.request_id, "reason": reason},
        }
        # Sent from a task of its own: the caller's cancellation must not wait on the network.
        task = asyncio.create_task(self._send_quietly(notice))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _send_quietly(self, message: Message) -> None:
        try:
            async with asyncio.timeout(_CANCEL_NOTICE_TIMEOUT_S):
                await self._send(message)
        except (McpError, TimeoutError) as exc:
            logger.info(
                "Could not tell MCP server %s that a request was cancelled: %s", self.server_name, exc
            )

    # ------------------------------------------------------------------ what the server sends us

    def _incoming(self, message: Message, call: Call | None) -> None:
        """A request or notification from the server (responses to us are the transport's business)."""
        method = message.get("method")
        if not isinstance(method, str):
            logger.debug("MCP server %s sent a message nothing waits for", self.server_name)
            return
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        if "id" not in message:
            self._notification(method, params)
            return
        request_id = message["id"]
        if not isinstance(request_id, int | str) or isinstance(request_id, bool):
            logger.warning("MCP server %s sent a request with an invalid id", self.server_name)
            return
        task = asyncio.create_task(self._answer(request_id, method, params, call))
        self._serving[request_id] = task
        task.add_done_callback(lambda _: self._serving.pop(request_id, None))
        if call is not None:
            related = self._related.setdefault(call.request_id, set())
            related.add(task)
            task.add_done_callback(related.discard)

    async def _answer(
        self, request_id: int | str, method: str, params: dict[str, Any], call: Call | None
    ) -> None:
        reply: Message
        if method == "ping":
            reply = {"result": {}}
        elif method == "elicitation/create" and self._handler_for(call) is not None:
            reply = await self._elicit(params, call)
        else:
            reply = {
                "error": {"code": RpcErrorCode.METHOD_NOT_FOUND, "message": f"Method not found: {method}"}
            }
        try:
            await self._send({"jsonrpc": "2.0", "id": request_id, **reply})
        except McpError as exc:
            logger.warning("Could not answer MCP server %s's %s: %s", self.server_name, method, exc)

    def _handler_for(self, call: Call | None) -> ElicitationHandler | None:
        return call.elicitation if call is not None and call.elicitation is not None else self._elicitation

    async def _elicit(self, params: dict[str, Any], call: Call | None) -> Message:
        handler = self._handler_for(call)
        assert handler is not None
        mode = params.get("mode", "form")
        message = params.get("message")
        schema = params.get("requestedSchema")
        if mode != "form":
            return _invalid_params(f"elicitation mode {mode!r} is not supported by this client (form only)")
        if not isinstance(message, str) or not isinstance(schema, dict):
            return _invalid_params("elicitation/create needs a message and a requestedSchema object")
        request = ElicitationRequest(
            self.server_name, message, schema, tool_name=call.tool_name if call is not None else None
        )
        try:
            answer = await handler(request)
        except Exception:
            logger.exception("The elicitation handler failed; answering cancel to %s", self.server_name)
            answer = ElicitationAnswer("cancel")
        result: dict[str, Any] = {"action": answer.action}
        if answer.action == "accept":
            result["content"] = answer.content or {}
        return {"result": result}

    def _notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/progress":
            self._progress(params)
        elif method == "notifications/tools/list_changed":
            if self._on_tools_changed is not None:
                _guarded(self._on_tools_changed, "on_tools_changed")
        elif method == "notifications/cancelled":
            task = self._serving.get(_hashable(params.get("requestId")))
            if task is not None:
                task.cancel()
        elif method == "notifications/message":
            logger.debug("MCP server %s logs: %s", self.server_name, params.get("data"))

    def _progress(self, params: dict[str, Any]) -> None:
        token, progress = params.get("progressToken"), params.get("progress")
        call = self._calls.get(token) if isinstance(token, int) and not isinstance(token, bool) else None
        if call is None or call.on_progress is None or not _is_number(progress):
            return
        total, text = params.get("total"), params.get("message")
        update = Progress(
            float(progress),
            float(total) if _is_number(total) else None,
            text if isinstance(text, str) else None,
        )
        callback = call.on_progress
        _guarded(lambda: callback(update), "on_progress")


def _invalid_params(message: str) -> Message:
    return {"error": {"code": RpcErrorCode.INVALID_PARAMS, "message": message}}


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _hashable(value: object) -> object:
    return value if isinstance(value, int | str) and not isinstance(value, bool) else None


def _guarded(callback: Callable[[], object], what: str) -> None:
    try:
        callback()
    except Exception:
        logger.exception("The MCP session's %s callback failed", what)


def answers(message: Message, request_id: int) -> bool:
    """Whether ``message`` is the response to our request ``request_id``."""
    answer_id = message.get("id")
    return type(answer_id) is int and answer_id == request_id and ("result" in message or "error" in message)


def parse_messages(body: bytes, server_name: str) -> list[Message]:
    """The messages in a body: one object, or (2025-03-26) a batch of them."""
    try:
        parsed = json.loads(body)
    except (ValueError, RecursionError):
        raise McpTransportError(f"The MCP server {server_name} sent a message that is not JSON") from None
    items = parsed if isinstance(parsed, list) else [parsed]
    if not all(isinstance(item, dict) for item in items):
        raise McpTransportError(f"The MCP server {server_name} sent a message that is not a JSON-RPC object")
    return items
