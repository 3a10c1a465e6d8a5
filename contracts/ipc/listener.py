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
from typing import Any

from contracts.ipc.client import JsonRpcClient, NotificationHandler
from contracts.ipc.framing import DEFAULT_MAX_FRAME_BYTES, FrameTooLarge
from contracts.ipc.handshake import (
    SECRET_ENV,
    HandshakeError,
    new_secret,
    read_first_frame,
    verify_hello,
    welcome_frame,
)

logger = logging.getLogger(__name__)


class RuntimeListener:
    """Waits for one runtime to connect and prove the secret; everything else is cut."""

    def __init__(self, directory: str, server: asyncio.Server, secret: str) -> None:
        self._directory = directory
        self._server = server
        self.secret = secret
        self.name = os.path.join(directory, "s")
        self._accepted: asyncio.Future[tuple[asyncio.StreamReader, asyncio.StreamWriter, bytes]] = (
            asyncio.get_running_loop().create_future()
        )
        self.rejected = 0

    @classmethod
    async def open(cls) -> RuntimeListener:
        if sys.platform == "win32":
            raise RuntimeError("the asyncio listener is Unix-only; on Windows use --stdio or the desktop")
        directory = tempfile.mkdtemp(prefix="cw-")  # mode 0700
        listener: RuntimeListener | None = None

        async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            assert listener is not None
            await listener._authenticate(reader, writer)

        try:
            server = await asyncio.start_unix_server(on_connect, os.path.join(directory, "s"))
        except BaseException:
            shutil.rmtree(directory, ignore_errors=True)
            raise
        os.chmod(os.path.join(directory, "s"), 0o600)
        listener = cls(directory, server, new_secret())
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
        reader, writer, rest = await self.accept_stream(timeout=timeout)
        return JsonRpcClient(
            reader, writer, on_notification=on_notification, initial=rest, max_frame_bytes=max_frame_bytes
        )

    async def accept_stream(
        self, *, timeout: float = 10.0
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, bytes]:
        """The authenticated runtime's raw stream and any bytes already read past the handshake."""
        async with asyncio.timeout(timeout):
            accepted = await asyncio.shield(self._accepted)
        await self.close()
        return accepted

    async def close(self) -> None:
        """Stop listening and remove the socket and its directory."""
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

    async def _authenticate(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            if self._accepted.done():
                raise HandshakeError("a runtime is already connected to this server")
            frame, rest = await read_first_frame(reader)
            nonce = verify_hello(self.secret, frame)
            if self._accepted.done():  # another peer won while this one was authenticating
                raise HandshakeError("a runtime is already connected to this server")
            writer.write(welcome_frame(self.secret, nonce))
            await writer.drain()
        except (HandshakeError, FrameTooLarge, TimeoutError, ConnectionError, OSError) as exc:
            self.rejected += 1
            logger.warning("refused a local connection: %s", exc)
            writer.close()
            return
        self._accepted.set_result((reader, writer, rest))
