"""The desktop's end of the handshake, in plain asyncio: for tests, tooling and benchmarks.

The desktop app itself listens with ``QLocalServer`` (``desktop.ipc``), which also gives the Windows
named pipe an owner-only ACL. This listener is Unix-only: it creates its socket inside a fresh
``0700`` directory, so no other user can reach it; on Windows, headless tools use ``--stdio``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import sys
import tempfile
from typing import Any, cast

from contracts.ipc.client import JsonRpcClient, NotificationHandler
from contracts.ipc.framing import DEFAULT_MAX_FRAME_BYTES, READ_CHUNK_BYTES
from contracts.ipc.handshake import (
    HANDSHAKE_MAX_FRAME_BYTES,
    HANDSHAKE_TIMEOUT_SECONDS,
    SECRET_ENV,
    HandshakeError,
    new_secret,
    verify_hello,
    welcome_frame,
)

logger = logging.getLogger(__name__)

_Accepted = tuple[asyncio.Transport, "_Handshake"]


class RuntimeListener:
    """Waits for one runtime to connect and prove the secret; everything else is cut."""

    def __init__(self, directory: str, secret: str, handshake_timeout: float) -> None:
        self._directory = directory
        self.secret = secret
        self.name = os.path.join(directory, "s")
        self.handshake_timeout = handshake_timeout
        self.rejected = 0
        self._server: asyncio.AbstractServer | None = None
        self._accepted: asyncio.Future[_Accepted] = asyncio.get_running_loop().create_future()

    @classmethod
    async def open(cls, *, handshake_timeout: float = HANDSHAKE_TIMEOUT_SECONDS) -> RuntimeListener:
        if sys.platform == "win32":
            raise RuntimeError("the asyncio listener is Unix-only; on Windows use --stdio or the desktop")
        listener = cls(tempfile.mkdtemp(prefix="cw-"), new_secret(), handshake_timeout)  # dir is 0700
        try:
            loop = asyncio.get_running_loop()
            listener._server = await loop.create_unix_server(lambda: _Handshake(listener), listener.name)
            os.chmod(listener.name, 0o600)
        except BaseException:
            await listener.close()
            raise
        return listener

    def child_environment(self) -> dict[str, str]:
        """What to add to the runtime's environment: the one-time secret."""
        return {SECRET_ENV: self.secret}

    async def accept(
        self,
        *,
        timeout: float = 10.0,
        on_notification: NotificationHandler | None = None,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
    ) -> JsonRpcClient:
        """The authenticated runtime, as a client; the listening socket is gone afterwards."""
        transport, handshake = await self._wait(timeout)
        return JsonRpcClient.over_transport(
            transport,
            initial=handshake.take_rest(),
            on_notification=on_notification,
            max_frame_bytes=max_frame_bytes,
        )

    async def accept_stream(
        self, *, timeout: float = 10.0
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """The authenticated runtime as a raw byte stream, for tests that speak bytes, not calls."""
        transport, handshake = await self._wait(timeout)
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=READ_CHUNK_BYTES, loop=loop)
        protocol = asyncio.StreamReaderProtocol(reader, loop=loop)
        transport.set_protocol(protocol)
        protocol.connection_made(transport)
        reader.feed_data(handshake.take_rest())
        return reader, asyncio.StreamWriter(transport, protocol, reader, loop)

    async def _wait(self, timeout: float) -> _Accepted:
        async with asyncio.timeout(timeout):
            accepted = await asyncio.shield(self._accepted)
        await self.close()
        return accepted

    @property
    def has_runtime(self) -> bool:
        return self._accepted.done()

    def authenticated(self, transport: asyncio.Transport, handshake: _Handshake) -> None:
        self._accepted.set_result((transport, handshake))

    async def close(self) -> None:
        """Stop listening and remove the socket and its directory."""
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
        shutil.rmtree(self._directory, ignore_errors=True)

    async def __aenter__(self) -> RuntimeListener:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.close()
        if not self._accepted.done():
            self._accepted.cancel()


class _Handshake(asyncio.Protocol):
    """One incoming connection until it proves the secret (see :mod:`contracts.ipc.handshake`).

    Reads at most 4 KiB and waits at most 5 s for the hello; anything else and it closes. Once the
    runtime is authenticated it keeps whatever arrives until a client takes the transport over.
    """

    def __init__(self, listener: RuntimeListener) -> None:
        self._listener = listener
        self._transport: asyncio.Transport | None = None
        self._buffer = b""
        self._authenticated = False
        self._timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)  # uvloop's are not subclasses
        if self._listener.has_runtime:
            self._refuse("a runtime is already connected to this server")
            return
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(self._listener.handshake_timeout, self._refuse, "no hello in time")

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        if self._authenticated:
            return
        frame, newline, rest = self._buffer.partition(b"\n")
        if not newline:
            if len(self._buffer) > HANDSHAKE_MAX_FRAME_BYTES:
                self._refuse("hello larger than 4 KiB")
            return
        try:
            if len(frame) > HANDSHAKE_MAX_FRAME_BYTES:
                raise HandshakeError("hello larger than 4 KiB")
            nonce = verify_hello(self._listener.secret, frame)
            if self._listener.has_runtime:
                raise HandshakeError("a runtime is already connected to this server")
        except HandshakeError as exc:
            self._refuse(str(exc))
            return
        self._cancel_timer()
        self._authenticated = True
        self._buffer = rest
        assert self._transport is not None
        self._transport.write(welcome_frame(self._listener.secret, nonce))
        self._listener.authenticated(self._transport, self)

    def take_rest(self) -> bytes:
        rest, self._buffer = self._buffer, b""
        return rest

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_timer()

    def _refuse(self, reason: str) -> None:
        self._cancel_timer()
        self._listener.rejected += 1
        logger.warning("refused a local connection: %s", reason)
        assert self._transport is not None
        self._transport.abort()

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
