"""MCP servers on loopback for the MCP client's tests and benchmark.

* :func:`sdk_server` — the official SDK's low-level ``Server`` over its streamable-HTTP app, with an
  in-memory event store (resumability) and the tools the tests need; it records what it received
  (cancellations, DELETEs) in a :class:`ServerLog`.
* :func:`edge_server` — a small hand-written Starlette app for what the SDK server never does:
  answer an older or unsupported protocol version, answer a notification with 200 and a body, refuse
  the GET stream with 405, answer a request with JSON instead of SSE, hang.
* :class:`ServerThread` — either app under uvicorn in a thread, on 127.0.0.1 and a free port.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import mcp_types as types
import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.streamable_http import EventCallback, EventMessage, EventStore
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = [
    "MemoryEventStore",
    "ServerLog",
    "ServerThread",
    "edge_server",
    "many_tools_server",
    "sdk_server",
]

PAGE_SIZE = 3


class ServerThread:
    """``app`` served by uvicorn on a thread; ``url`` is its endpoint once entered."""

    def __init__(self, app: ASGIApp, *, path: str = "/mcp") -> None:
        self._server = uvicorn.Server(
            uvicorn.Config(
                app, host="127.0.0.1", port=0, log_level="warning", lifespan="on", timeout_graceful_shutdown=1
            )
        )
        self._path = path
        self._thread = threading.Thread(target=self._server.run, name="mcp-test-server", daemon=True)
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self._path}"

    def __enter__(self) -> ServerThread:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the MCP test server did not start")
            time.sleep(0.005)
        self.port = self._server.servers[0].sockets[0].getsockname()[1]
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.should_exit = True
        self._thread.join(10)


@dataclass
class ServerLog:
    """What a test server saw, for assertions (written on the server's thread)."""

    methods: list[str] = field(default_factory=list)
    cancelled: list[Any] = field(default_factory=list)
    deletes: list[str] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    elicitation_answers: list[dict[str, Any]] = field(default_factory=list)
    initialize_params: list[dict[str, Any]] = field(default_factory=list)

    def wait_for(self, check: Callable[[], bool], timeout: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout
        while not check():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)
        return True


class MemoryEventStore(EventStore):
    """Every event of every stream, in order, so a stream can be replayed after a ``Last-Event-ID``."""

    def __init__(self) -> None:
        self._events: list[tuple[str, str, types.JSONRPCMessage | None]] = []
        self._ids = itertools.count(1)

    async def store_event(self, stream_id: str, message: types.JSONRPCMessage | None) -> str:
        event_id = f"{stream_id}:{next(self._ids)}"
        self._events.append((event_id, stream_id, message))
        return event_id

    async def replay_events_after(self, last_event_id: str, send_callback: EventCallback) -> str | None:
        position = next(
            (i for i, (event_id, _, _) in enumerate(self._events) if event_id == last_event_id), None
        )
        if position is None:
            return None
        stream_id = self._events[position][1]
        for event_id, stream, message in self._events[position + 1 :]:
            if stream == stream_id and message is not None:
                await send_callback(EventMessage(message, event_id))
        return stream_id


class _Recorder:
    """ASGI middleware: records DELETEs, the cancellations clients send, and request headers."""

    def __init__(self, app: ASGIApp, log: ServerLog) -> None:
        self._app = app
        self._log = log
        # The wrapped app's router, so a host that runs the lifespan of its inner app finds it.
        self.router = getattr(app, "router", None)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        headers = {name.decode().lower(): value.decode() for name, value in scope["headers"]}
        self._log.headers.append({"method": scope["method"], **headers})
        if scope["method"] == "DELETE":
            self._log.deletes.append(headers.get("mcp-session-id", ""))
        if scope["method"] != "POST":
            await self._app(scope, receive, send)
            return
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            if isinstance(parsed.get("method"), str):
                self._log.methods.append(parsed["method"])
            if parsed.get("method") == "initialize":
                self._log.initialize_params.append(parsed.get("params", {}))
            if parsed.get("method") == "notifications/cancelled":
                self._log.cancelled.append(parsed.get("params", {}).get("requestId"))
            if "result" in parsed and "action" in (parsed.get("result") or {}):
                self._log.elicitation_answers.append(parsed["result"])
        sent = False

        async def replay() -> Any:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self._app(scope, replay, send)


def _tool(name: str, properties: dict[str, Any] | None = None, **extra: Any) -> types.Tool:
    schema = {"type": "object", "properties": properties or {}, "required": list(properties or {})}
    return types.Tool(name=name, description=f"The {name} tool", input_schema=schema, **extra)


ELICIT_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Your name", "default": "Ada"},
        "count": {"type": "integer", "minimum": 1, "default": 2},
        "color": {"type": "string", "enum": ["red", "green"], "default": "green"},
    },
    "required": ["name"],
}
REQUIRED_WITHOUT_DEFAULT = {
    "type": "object",
    "properties": {"token": {"type": "string"}},
    "required": ["token"],
}

SDK_TOOLS: list[types.Tool] = [
    _tool("echo", {"text": {"type": "string"}}),
    _tool(
        "add",
        {"a": {"type": "integer"}, "b": {"type": "integer"}},
        output_schema={"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]},
    ),
    _tool("wrong_shape", output_schema={"type": "object", "properties": {"sum": {"type": "integer"}}}),
    _tool("fail"),
    _tool("slow", {"seconds": {"type": "number", "default": 0.2}}),
    _tool("ask"),
    _tool("ask_required"),
    _tool("big", {"size": {"type": "integer", "default": 1024}}),
    _tool("cut"),
    _tool("media"),
    _tool("change_tools"),
    _tool("ping_client"),
    # Malformed (the SDK itself refuses to list a schema whose type is not "object"): the client rejects
    # these two and keeps the others.
    types.Tool(
        name="bad_dialect",
        description="a JSON Schema dialect nobody knows",
        input_schema={"type": "object", "$schema": "https://example.com/no-such-dialect"},
    ),
    types.Tool(
        name="bad_schema",
        description="not a valid JSON Schema",
        input_schema={"type": "object", "properties": {"x": {"type": 12}}},
    ),
]


def sdk_server(
    log: ServerLog | None = None, *, retry_ms: int = 100, json_response: bool = False
) -> tuple[ASGIApp, ServerLog]:
    """The official SDK's streamable-HTTP server with the test tools, paginated ``PAGE_SIZE`` a page."""
    log = log if log is not None else ServerLog()
    app = _test_server().streamable_http_app(
        event_store=MemoryEventStore(), retry_interval=retry_ms, json_response=json_response
    )
    return _Recorder(app, log), log


def _test_server() -> Server[Any]:
    """The SDK's low-level server with the test tools (one per server: ``change_tools`` adds to them)."""
    tools = list(SDK_TOOLS)

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        start = int(params.cursor) if params is not None and params.cursor else 0
        page = tools[start : start + PAGE_SIZE]
        more = start + PAGE_SIZE < len(tools)
        return types.ListToolsResult(tools=page, next_cursor=str(start + PAGE_SIZE) if more else None)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = params.arguments or {}
        name = params.name
        if name == "echo":
            return _text(str(arguments.get("text", "")))
        if name == "add":
            total = int(arguments["a"]) + int(arguments["b"])
            return types.CallToolResult(content=[_block(str(total))], structured_content={"sum": total})
        if name == "wrong_shape":
            return types.CallToolResult(content=[_block("?")], structured_content={"sum": "many"})
        if name == "fail":
            return types.CallToolResult(content=[_block("the tool broke")], is_error=True)
        if name == "slow":
            seconds = float(arguments.get("seconds", 0.2))
            await ctx.session.report_progress(1, 2, "halfway")
            await asyncio.sleep(seconds)
            await ctx.session.report_progress(2, 2, "done")
            return _text(f"slept {seconds}")
        if name in ("ask", "ask_required"):
            schema = ELICIT_SCHEMA if name == "ask" else REQUIRED_WITHOUT_DEFAULT
            answer = await ctx.session.elicit_form("Tell me", schema, related_request_id=ctx.request_id)
            content = answer.content if answer.action == "accept" else None
            return _text(json.dumps({"action": answer.action, "content": content}, sort_keys=True))
        if name == "big":
            return _text("x" * int(arguments.get("size", 1024)))
        if name == "cut":
            await ctx.session.report_progress(1, 3, "before the cut")
            assert ctx.close_sse_stream is not None, "the cut tool needs the event store"
            await ctx.close_sse_stream()
            await asyncio.sleep(0.05)
            await ctx.session.report_progress(2, 3, "after the cut")
            return _text("survived the cut")
        if name == "media":
            png = base64.b64encode(b"\x89PNG\r\n\x1a\nfake").decode()
            return types.CallToolResult(
                content=[
                    _block("here"),
                    types.ImageContent(type="image", data=png, mime_type="image/png"),
                    types.EmbeddedResource(
                        type="resource",
                        resource=types.TextResourceContents(
                            uri="file:///notes/a.txt", text="hello", mime_type="text/plain"
                        ),
                    ),
                    types.ResourceLink(type="resource_link", uri="https://example.com/doc", name="doc"),
                ]
            )
        if name == "ping_client":
            await ctx.session.send_ping()
            return _text("the client answered")
        if name == "change_tools":
            tools.append(_tool(f"added_{len(tools)}"))
            await ctx.session.send_tool_list_changed()
            return _text("changed")
        raise ValueError(f"Unknown tool: {name}")

    return Server("cowork-test", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)


def many_tools_server(count: int, *, page_size: int = 50) -> ASGIApp:
    """The SDK's server listing ``count`` small tools, ``page_size`` a page; each echoes its input."""
    tools = [_tool(f"tool_{i:03d}", {"text": {"type": "string"}}) for i in range(count)]

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        start = int(params.cursor) if params is not None and params.cursor else 0
        more = start + page_size < len(tools)
        return types.ListToolsResult(
            tools=tools[start : start + page_size], next_cursor=str(start + page_size) if more else None
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return _text(str((params.arguments or {}).get("text", "")))

    server = Server("bench", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)
    return server.streamable_http_app()


def _block(text: str) -> types.TextContent:
    return types.TextContent(type="text", text=text)


def _text(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[_block(text)])


# ---------------------------------------------------------------------- the hand-written server


@dataclass
class EdgeBehaviour:
    """How :func:`edge_server` misbehaves (each test sets what it needs)."""

    protocol_version: str | None = None
    """Answer initialize with this version (``None``: echo the client's)."""
    notification_status: int = 202
    notification_body: bytes = b""
    get_status: int = 405
    hang: bool = False
    """Never answer tools/call (headers sent, then nothing)."""
    sse_answers: bool = False
    session_id: str | None = "edge-session"
    cut: str | None = None
    """tools/call's event stream ends before the answer: ``"no-id"`` without any event id, ``"id"``
    after an event with an id (the GET to resume it then gets ``get_status``)."""
    refuse: int | None = None
    """Answer every POST with this status (401 comes with a WWW-Authenticate challenge)."""


def edge_server(behaviour: EdgeBehaviour, log: ServerLog | None = None) -> tuple[ASGIApp, ServerLog]:
    """A minimal streamable-HTTP MCP server at ``/`` (the root path), written by hand."""
    log = log if log is not None else ServerLog()

    async def endpoint(request: Request) -> Response:
        log.headers.append({"method": request.method, **{k.lower(): v for k, v in request.headers.items()}})
        if request.method == "GET":
            return Response(status_code=behaviour.get_status)
        if request.method == "DELETE":
            log.deletes.append(request.headers.get("mcp-session-id", ""))
            return Response(status_code=200)
        if behaviour.refuse is not None:
            challenge = {
                "www-authenticate": 'Bearer error="invalid_token", error_description="the token expired"'
            }
            return Response(
                status_code=behaviour.refuse, headers=challenge if behaviour.refuse == 401 else None
            )
        message = json.loads(await request.body())
        method = message.get("method")
        if method is not None:
            log.methods.append(method)
        if "id" not in message:
            if method == "notifications/cancelled":
                log.cancelled.append(message["params"]["requestId"])
            return Response(
                behaviour.notification_body,
                status_code=behaviour.notification_status,
                media_type="application/json" if behaviour.notification_body else None,
            )
        if method == "initialize":
            log.initialize_params.append(message["params"])
            version = behaviour.protocol_version or message["params"]["protocolVersion"]
            result: dict[str, Any] = {
                "protocolVersion": version,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "edge", "version": "0.1"},
            }
            headers = {"mcp-session-id": behaviour.session_id} if behaviour.session_id else {}
            return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "result": result}, headers=headers)
        if method == "tools/list":
            tool = {
                "name": "echo",
                "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
            }
            return _answer(message["id"], {"tools": [tool]}, behaviour.sse_answers)
        if method == "tools/call":
            if behaviour.hang:
                return StreamingResponse(_forever(), media_type="text/event-stream")
            if behaviour.cut is not None:
                event_id = "id: 1\n" if behaviour.cut == "id" else ""
                progress = {
                    "jsonrpc": "2.0",
                    "method": "notifications/message",
                    "params": {"data": "working"},
                }
                return Response(
                    f"{event_id}event: message\ndata: {json.dumps(progress)}\n\n",
                    media_type="text/event-stream",
                )
            text = (message["params"].get("arguments") or {}).get("text", "")
            return _answer(
                message["id"], {"content": [{"type": "text", "text": text}]}, behaviour.sse_answers
            )
        if method == "ping":
            return _answer(message["id"], {}, behaviour.sse_answers)
        return JSONResponse(
            {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "nope"}}
        )

    app = Starlette(routes=[Route("/", endpoint, methods=["GET", "POST", "DELETE"])])
    return app, log


def _answer(request_id: Any, result: dict[str, Any], sse: bool) -> Response:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "result": result}
    if not sse:
        return JSONResponse(message)
    return Response(f"event: message\ndata: {json.dumps(message)}\n\n", media_type="text/event-stream")


async def _forever() -> Any:
    yield b": waiting\n\n"
    await asyncio.sleep(3600)


# ---------------------------------------------------------------------- stdio


async def _serve_stdio() -> None:
    from mcp.server.stdio import stdio_server

    server = _test_server()
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def _serve_many(count: int, page_size: int) -> None:
    """Serve :func:`many_tools_server` until stdin closes; the URL is the first line on stdout."""
    import sys

    with ServerThread(many_tools_server(count, page_size=page_size)) as server:
        print(server.url, flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    # ``python -m tests.support.mcp_servers stdio``: the test server over stdin/stdout.
    # ``python -m tests.support.mcp_servers many COUNT PAGE_SIZE``: the benchmark's server, in a process
    # of its own so that it does not share the client's interpreter lock.
    import sys

    if sys.argv[1:] == ["stdio"]:
        asyncio.run(_serve_stdio())
    elif len(sys.argv) == 4 and sys.argv[1] == "many":
        _serve_many(int(sys.argv[2]), int(sys.argv[3]))
    else:
        sys.exit("usage: python -m tests.support.mcp_servers stdio | many COUNT PAGE_SIZE")
