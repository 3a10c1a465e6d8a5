"""The HTTP server ``cowork-backend serve`` runs the app in: uvicorn on a socket bound beforehand.

Imported by :mod:`backend.cli` only when it serves: uvicorn and its protocol modules are part of the
embedded backend's start, which the other commands do not pay for.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import signal
import socket
import sys
import threading
from collections.abc import Callable, Iterator

import anyio.to_thread
import uvicorn

from backend.idle import IdleWatch

__all__ = ["Server", "bind", "loop_and_http", "resume_collection"]


class Server(uvicorn.Server):
    """uvicorn, announcing readiness once it accepts connections and exiting 0 on SIGTERM/SIGINT."""

    def __init__(
        self,
        config: uvicorn.Config,
        on_ready: Callable[[], None],
        worker_threads: int,
        idle: IdleWatch | None = None,
    ) -> None:
        super().__init__(config)
        self._on_ready = on_ready
        self._worker_threads = worker_threads
        self._idle = idle
        self._watching: asyncio.Task[None] | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        # Blocking store calls and artifact bytes run in these worker threads (anyio's default is
        # 40, far more than two cores can run: the extra threads only queue on the GIL and the disk).
        anyio.to_thread.current_default_thread_limiter().total_tokens = self._worker_threads
        await super().startup(sockets)
        if self.started:
            self._on_ready()
            if self._idle is not None:
                self._watching = asyncio.create_task(self._idle.run(self.server_state, self._stop_idle))

    def _stop_idle(self) -> None:
        self.should_exit = True

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        if self._watching is not None:
            self._watching.cancel()
        await super().shutdown(sockets)

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        # uvicorn re-raises the signal after a graceful shutdown, which ends the process with the
        # signal's status; a clean shutdown on request should exit 0.
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        handled = [signal.SIGINT, signal.SIGTERM] + ([signal.SIGBREAK] if hasattr(signal, "SIGBREAK") else [])
        previous = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def bind(host: str, port: int) -> socket.socket:
    """The listening socket, bound before uvicorn starts so that ``--port 0`` reports its real port;
    ``OSError`` if it cannot listen there."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        if sys.platform != "win32":
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Inherited by accepted connections: small responses leave at once rather than waiting for
        # the client's delayed ACK (uvloop sets it anyway; asyncio's own loops do not on this socket).
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    return sock


def loop_and_http() -> tuple[str, str]:
    """uvicorn's fastest event loop and HTTP parser installed here."""
    try:
        import uvloop  # noqa: F401

        loop = "uvloop"
    except ImportError:  # Windows
        loop = "asyncio"
    try:
        import httptools  # noqa: F401

        http = "httptools"
    except ImportError:
        http = "h11"
    return loop, http


def resume_collection(enable: bool) -> None:
    """The start is over (see ``backend.cli.main``): what it loaded — modules, classes, the app — is
    moved out of the cyclic collector's sight for good, and collection resumes if ``enable``.

    Without the freeze the first full collections would walk those ~85,000 objects (40–60 ms each,
    measured) in the middle of requests; they live as long as the process anyway. The few hundred
    cycles of temporary objects the start left behind stay with them (well under a megabyte).
    """
    gc.freeze()
    if enable:
        gc.enable()
