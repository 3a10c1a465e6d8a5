"""Running the gateway: in the caller's event loop, in a thread of its own, or as the CLI's server.

The listening socket is bound and listening before anything else happens, so the URL is known (and
connectable) as soon as ``start`` returns — no waiting for a "started" flag.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import uvicorn
from uvicorn.server import ServerState

from .app import GatewayApp, install_cut_filter
from .script import Script, load_script, parse_script
from .state import GatewayState, RecordedRequest, Responder
from .tls import GatewayCertificate

__all__ = ["ScriptedGateway", "ScriptedGatewayThread", "Serving", "bind", "url_for"]

ScriptSource = Script | str | Path | list[Any] | dict[str, Any] | None
"""A :class:`Script`, a path to a script file, JSON-shaped data, or ``None`` for the demo model."""

_SHUTDOWN_TIMEOUT_S = 5.0


def _script(source: ScriptSource) -> Script | None:
    if source is None or isinstance(source, Script):
        return source
    if isinstance(source, str | Path):
        return load_script(source)
    return parse_script(source)


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket; port 0 picks a free one."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.create_server((host, port), family=family, backlog=128)
    # Accepted connections inherit it. asyncio sets TCP_NODELAY only on sockets it creates itself with
    # IPPROTO_TCP, not on this one (proto 0): Nagle's algorithm then held back small SSE writes until
    # the client's delayed ACK, and a 5,000 chunks/s stream arrived in bursts 40 ms apart.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.setblocking(False)
    return sock


def url_for(sock: socket.socket, *, tls: bool = False) -> str:
    host, port = sock.getsockname()[:2]
    scheme = "https" if tls else "http"
    return f"{scheme}://[{host}]:{port}" if ":" in host else f"{scheme}://{host}:{port}"


class Serving:
    """uvicorn's HTTP protocol on an asyncio server this module starts and stops itself.

    ``uvicorn.Server`` polls: it notices ``should_exit`` on a 100 ms tick and sleeps another 100 ms
    while shutting down, which made every test's gateway cost 200 ms to stop. Here stopping waits
    for exactly the requests still running (they end at once: ``GatewayApp.stop`` aborts delays and
    holds), and signal handling is left to the CLI, so an in-process gateway never touches the host
    process's handlers.
    """

    def __init__(
        self,
        app: GatewayApp,
        sock: socket.socket,
        *,
        tls: GatewayCertificate | None = None,
        keep_alive_s: float = 5.0,
    ) -> None:
        """``tls``: serve HTTPS with this certificate; ``keep_alive_s``: how long an idle connection is
        kept before the gateway closes it (uvicorn's ``timeout_keep_alive``, 5 s by default as there)."""
        install_cut_filter()
        self.app = app
        self._sock = sock
        self._ssl = tls.server_context() if tls is not None else None
        self._config = uvicorn.Config(
            app,
            log_config=None,
            access_log=False,
            lifespan="off",
            proxy_headers=False,
            server_header=False,
            date_header=False,
            timeout_keep_alive=keep_alive_s,  # type: ignore[arg-type]  # uvicorn accepts a float
        )
        self._config.load()
        self._state = ServerState()
        self._server: asyncio.Server | None = None

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        config, state = self._config, self._state

        def protocol() -> asyncio.Protocol:
            return config.http_protocol_class(  # type: ignore[call-arg]
                config=config, server_state=state, app_state={}, _loop=loop
            )

        self._server = await loop.create_server(protocol, sock=self._sock, backlog=128, ssl=self._ssl)

    @property
    def open_connections(self) -> int:
        """Client connections open now (a kept-alive one counts until either side closes it)."""
        return len(self._state.connections)

    async def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        self.app.stop()
        server.close()
        for connection in list(self._state.connections):
            connection.shutdown()
        running = list(self._state.tasks)
        if running:
            _, late = await asyncio.wait(running, timeout=_SHUTDOWN_TIMEOUT_S)
            for task in late:
                task.cancel()
            await asyncio.gather(*late, return_exceptions=True)
        for connection in list(self._state.connections):
            connection.shutdown()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(_SHUTDOWN_TIMEOUT_S):
                await server.wait_closed()


class ScriptedGateway:
    """The gateway in the current event loop: ``async with ScriptedGateway(script) as gateway``.

    ``gateway.url`` is the endpoint for either dialect (``{url}/v1/messages``,
    ``{url}/v1/chat/completions``). ``requests`` lists what arrived, ``assert_done()`` fails when
    scripted turns were left unplayed or requests came after the script ran out.

    ``ScriptedGateway(None, responder=fn)`` answers each request with ``fn(dialect, body)`` instead of
    a script: the turn (a turn model or its JSON-shaped data) or ``None`` for "no more turns". It runs
    on the gateway's event loop and must not block.
    """

    def __init__(
        self,
        script: ScriptSource,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str | None = None,
        demo_chunk_delay_ms: int = 0,
        max_recorded: int | None = None,
        responder: Responder | None = None,
        tls: bool = False,
        keep_alive_s: float = 5.0,
    ) -> None:
        """``tls``: serve HTTPS with a certificate made now (:attr:`certificate`, for the client to
        trust); ``keep_alive_s``: how long the gateway keeps an idle client connection open."""
        self.state = GatewayState(
            _script(script),
            demo_chunk_delay_ms=demo_chunk_delay_ms,
            max_recorded=max_recorded,
            responder=responder,
        )
        self._host = host
        self._port = port
        self._token = token
        self._keep_alive_s = keep_alive_s
        self.certificate = GatewayCertificate.generate(host) if tls else None
        self._app: GatewayApp | None = None
        self._serving: Serving | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._url = ""

    @classmethod
    def demo(cls, **options: Any) -> ScriptedGateway:
        """The offline demo model (see :mod:`.demo`); keeps the latest 100 requests unless told."""
        return cls(None, **{"max_recorded": 100, **options})

    @property
    def url(self) -> str:
        if not self._url:
            raise RuntimeError("the scripted gateway is not started")
        return self._url

    @property
    def requests(self) -> list[RecordedRequest]:
        return self.state.requests

    def snapshot(self) -> dict[str, Any]:
        return self.state.snapshot()

    @property
    def open_connections(self) -> int:
        """Client connections open now; call on the gateway's event loop."""
        return self._serving.open_connections if self._serving is not None else 0

    def assert_done(self) -> None:
        """Fail (``AssertionError``) if turns were left unplayed or the script was overrun."""
        problems = self.state.leftovers()
        if problems:
            raise AssertionError("scripted gateway: " + "; ".join(problems))

    def release(self, count: int = 1) -> None:
        """Let ``count`` held streams (``holdAfterChunks``) go on; callable from any thread."""
        if self._loop is None or self._app is None:
            raise RuntimeError("the scripted gateway is not started")
        self._loop.call_soon_threadsafe(self._app.release, count)

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = 5.0) -> None:
        """Wait until ``predicate()`` holds, re-checked whenever a request is recorded or changes."""
        changed = asyncio.Event()
        loop = asyncio.get_running_loop()

        def notify() -> None:
            loop.call_soon_threadsafe(changed.set)

        unwatch = self.state.watch(notify)
        try:
            async with asyncio.timeout(timeout):
                while not predicate():
                    await changed.wait()
                    changed.clear()
        finally:
            unwatch()

    async def start(self) -> None:
        sock = bind(self._host, self._port)
        self._url = url_for(sock, tls=self.certificate is not None)
        self._loop = asyncio.get_running_loop()
        self._app = GatewayApp(self.state, token=self._token)
        self._serving = Serving(self._app, sock, tls=self.certificate, keep_alive_s=self._keep_alive_s)
        await self._serving.start()

    async def aclose(self) -> None:
        serving, self._serving = self._serving, None
        if serving is not None:
            await serving.stop()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


class ScriptedGatewayThread:
    """The same gateway on its own event loop in a background thread, for synchronous code::

    with ScriptedGatewayThread(script) as gateway:
        httpx.post(f"{gateway.url}/v1/messages", ...)
    """

    def __init__(self, script: ScriptSource, **options: Any) -> None:
        self.gateway = ScriptedGateway(script, **options)
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopped = threading.Event()

    @property
    def url(self) -> str:
        return self.gateway.url

    @property
    def requests(self) -> list[RecordedRequest]:
        return self.gateway.requests

    @property
    def certificate(self) -> GatewayCertificate | None:
        return self.gateway.certificate

    def assert_done(self) -> None:
        self.gateway.assert_done()

    def release(self, count: int = 1) -> None:
        self.gateway.release(count)

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 5.0) -> None:
        changed = threading.Event()
        unwatch = self.gateway.state.watch(changed.set)
        try:
            with _deadline(timeout) as remaining:
                while not predicate():
                    if not changed.wait(remaining()):
                        raise TimeoutError("the scripted gateway did not reach the expected state")
                    changed.clear()
        finally:
            unwatch()

    def start(self) -> None:
        started = threading.Event()
        failure: list[BaseException] = []

        async def run() -> None:
            try:
                await self.gateway.start()
            except BaseException as exc:
                failure.append(exc)
                raise
            finally:
                started.set()
            await asyncio.to_thread(self._stopped.wait)
            await self.gateway.aclose()

        self._thread = threading.Thread(
            target=asyncio.run, args=(run(),), name="scripted-gateway", daemon=True
        )
        self._thread.start()
        if not started.wait(10.0):
            raise TimeoutError("the scripted gateway thread did not start")
        if failure:
            raise failure[0]

    def stop(self) -> None:
        self._stopped.set()
        if self._thread is not None:
            self._thread.join(timeout=_SHUTDOWN_TIMEOUT_S * 3)
            self._thread = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


@contextlib.contextmanager
def _deadline(timeout: float) -> Iterator[Callable[[], float]]:
    end = time.monotonic() + timeout
    yield lambda: max(0.0, end - time.monotonic())
