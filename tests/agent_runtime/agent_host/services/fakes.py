"""Real loopback servers that misbehave on purpose, for the backend client's fault tests.

* :class:`ScriptedHttpServer` — a stdlib HTTP/1.1 server (keep-alive) answering from a script: any
  status, headers and body, raw bytes that are not HTTP, a hang until the test ends.
* :class:`CuttingProxy` — a TCP proxy in front of the real backend that lets the first ``cut``
  requests through and then drops the connection as the answer starts: the server did the work, the
  client never heard (the case an idempotency key exists for).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HANG_LIMIT_S = 10.0


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None
    """Written as is instead of an HTTP answer, then the connection is closed."""
    hang: bool = False
    """Read the request, answer nothing until the server stops."""


@dataclass(frozen=True)
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    client_port: int


class ScriptedHttpServer:
    """Answers requests with ``replies`` in order; the last one repeats."""

    def __init__(self, replies: list[Reply]) -> None:
        self._replies = list(replies)
        self.received: list[Received] = []
        self._lock = threading.Lock()
        self._release = threading.Event()
        self.arrived = threading.Event()
        """Set when the first request has been read."""
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        # A short poll interval: shutdown() waits up to one interval, once per test.
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.01,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> ScriptedHttpServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._release.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=HANG_LIMIT_S)

    def _next(self, received: Received) -> Reply:
        with self._lock:
            self.received.append(received)
            self.arrived.set()
            return self._replies.pop(0) if len(self._replies) > 1 else self._replies[0]

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                reply = server._next(
                    Received(
                        self.command,
                        self.path,
                        {k.lower(): v for k, v in self.headers.items()},
                        body,
                        self.client_address[1],
                    )
                )
                if reply.hang:
                    server._release.wait(HANG_LIMIT_S)
                    self.close_connection = True
                    return
                if reply.raw is not None:
                    self.wfile.write(reply.raw)
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.send_response(reply.status)
                headers = {"content-type": "application/json", **reply.headers}
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)

            do_GET = do_POST = _handle

        return Handler


@contextlib.contextmanager
def scripted(*replies: Reply) -> Iterator[ScriptedHttpServer]:
    with ScriptedHttpServer(list(replies)) as server:
        yield server


class CuttingProxy:
    """A loopback TCP proxy to ``upstream`` that drops the first ``cut`` connections' answers."""

    def __init__(self, upstream_host: str, upstream_port: int, *, cut: int) -> None:
        self._upstream = (upstream_host, upstream_port)
        self._cut = cut
        self.connections = 0
        self.cut_done = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    async def __aenter__(self) -> CuttingProxy:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.connections += 1
        cutting = self.cut_done < self._cut
        if cutting:
            self.cut_done += 1
        up_reader, up_writer = await asyncio.open_connection(*self._upstream)
        forward = asyncio.create_task(_pipe(reader, up_writer))
        try:
            if cutting:
                # The backend has handled the request once it starts answering; the client never hears.
                await asyncio.wait_for(up_reader.read(1), HANG_LIMIT_S)
            else:
                await _pipe(up_reader, writer)
        finally:
            forward.cancel()
            with contextlib.suppress(asyncio.CancelledError, OSError):
                await forward
            for w in (writer, up_writer):
                w.close()
                with contextlib.suppress(OSError):
                    await w.wait_closed()
            self._tasks.discard(task)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while data := await reader.read(65536):
        writer.write(data)
        await writer.drain()
