"""The MCP servers of the integration tests: the official SDK's high-level server (``MCPServer``, the
SDK's FastMCP) over streamable HTTP on loopback, in a thread, and the same server as a local (stdio)
program.

``docs_server`` offers a read-only search, a tool that counts (an integer argument), a destructive
delete, a tool no policy allows, a question to the user (elicitation), a tool that adds a tool and
announces it (``tools/list_changed``), one that reports progress and one that returns an image. Every
call the server receives is recorded, so a test can tell that a call never reached it.
"""

from __future__ import annotations

import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

import mcp_types as types
import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel, Field
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["DocsLog", "LoopbackServer", "docs_server", "free_port", "stdio_server_command"]

READ_ONLY = types.ToolAnnotations(read_only_hint=True)
PNG = b"\x89PNG\r\n\x1a\n-not-really-an-image"


@dataclass
class DocsLog:
    calls: list[str] = field(default_factory=list)
    http: list[str] = field(default_factory=list)
    """The HTTP method of every request the server received (``DELETE`` ends a session)."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    release: threading.Event = field(default_factory=threading.Event)
    """Lets a ``hold`` call finish."""

    def record(self, name: str) -> None:
        with self.lock:
            self.calls.append(name)

    def wait_for(self, name: str, timeout: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout
        while name not in self.calls:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)
        return True


class Nickname(BaseModel):
    name: str = Field(default="Ada", title="Your name")
    cups: int = Field(default=2, ge=1, description="How many cups")


def docs_server(log: DocsLog | None = None) -> tuple[MCPServer, DocsLog]:
    log = log if log is not None else DocsLog()
    server = MCPServer("docs")

    @server.tool(annotations=READ_ONLY)
    def search(query: str) -> str:
        """Search the documentation."""
        log.record("search")
        return f"found: {query}"

    @server.tool(annotations=READ_ONLY)
    def count(n: int) -> str:
        """Count up to n."""
        log.record("count")
        return " ".join(str(i) for i in range(1, n + 1))

    @server.tool()
    def delete_page(page: str) -> str:
        """Delete a documentation page."""
        log.record("delete_page")
        return f"deleted {page}"

    @server.tool(annotations=READ_ONLY)
    def secret() -> str:
        """A tool no policy allows."""
        log.record("secret")
        return "the secret"

    @server.tool(annotations=READ_ONLY)
    async def ask_name(ctx: Context) -> str:
        """Ask the user for their name."""
        log.record("ask_name")
        answer = await ctx.elicit("What is your name?", Nickname)
        if answer.action == "accept":
            return f"hello {answer.data.name}, {answer.data.cups} cups"
        return f"no name ({answer.action})"

    @server.tool(annotations=READ_ONLY)
    async def grow(ctx: Context) -> str:
        """Add a tool and tell the client."""
        log.record("grow")

        def extra() -> str:
            """A tool added while the session runs."""
            log.record("extra")
            return "extra!"

        server.add_tool(extra, annotations=READ_ONLY)
        await ctx.session.send_tool_list_changed()
        return "grown"

    @server.tool(annotations=READ_ONLY)
    async def progress(ctx: Context) -> str:
        """Report progress twice."""
        log.record("progress")
        await ctx.report_progress(1, 2, "halfway")
        await ctx.report_progress(2, 2, "done")
        return "progressed"

    @server.tool(annotations=READ_ONLY)
    async def hold() -> str:
        """Wait until the test releases it (at most 30 s)."""
        log.record("hold")
        import asyncio

        for _ in range(3000):
            if log.release.is_set():
                return "released"
            await asyncio.sleep(0.01)
        return "gave up waiting"

    @server.tool(annotations=READ_ONLY)
    def picture() -> list[types.TextContent | types.ImageContent]:
        """Return an image."""
        log.record("picture")
        import base64

        data = base64.b64encode(PNG).decode()
        return [
            types.TextContent(type="text", text="a picture"),
            types.ImageContent(type="image", data=data, mime_type="image/png"),
        ]

    return server, log


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class LoopbackServer:
    """The app ``make_app`` builds, under uvicorn on a thread at 127.0.0.1:``port`` (a free one by
    default); ``url`` is its MCP endpoint. Can be stopped and started again on the same port (with a new
    app: the SDK's session manager runs once per instance)."""

    def __init__(
        self,
        make_app: Callable[[], ASGIApp],
        *,
        port: int | None = None,
        path: str = "/mcp",
        log: DocsLog | None = None,
    ) -> None:
        self._make_app = make_app
        self._log = log
        self.port = port or free_port()
        self._path = path
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self._path}"

    def start(self) -> None:
        self._server = uvicorn.Server(
            uvicorn.Config(
                _Recorder(self._make_app(), self._log) if self._log is not None else self._make_app(),
                host="127.0.0.1",
                port=self.port,
                log_level="warning",
                lifespan="on",
                timeout_graceful_shutdown=1,
            )
        )
        self._thread = threading.Thread(target=self._server.run, name="mcp-loopback", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 15
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the MCP test server did not start")
            time.sleep(0.005)

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(15)
            self._server = None

    def __enter__(self) -> LoopbackServer:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


class _Recorder:
    """ASGI middleware writing down the HTTP method of each request."""

    def __init__(self, app: ASGIApp, log: DocsLog) -> None:
        self._app = app
        self._log = log

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            with self._log.lock:
                self._log.http.append(scope["method"])
        await self._app(scope, receive, send)


def stdio_server_command(log_path: Path) -> list[str]:
    """The docs server as a local program speaking MCP on stdio; it appends each call to ``log_path``."""
    return [sys.executable, str(Path(__file__).with_name("stdio_docs.py")), str(log_path)]
