"""A plain asyncio JSON-RPC client for tests, tooling, benchmarks and headless use.

It speaks the same framing and handshake as the desktop's Qt client and shares its bookkeeping
(:class:`contracts.ipc.client_core.ClientCore`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from contracts.ipc.client_core import ClientCore, ConnectionClosed, ProtocolViolation, timeout_error
from contracts.ipc.framing import DEFAULT_MAX_FRAME_BYTES, READ_CHUNK_BYTES, FrameDecoder, FrameTooLarge

logger = logging.getLogger(__name__)

NotificationHandler = Callable[[str, Any], None]


class JsonRpcClient:
    """Calls methods on a connected server and hands its notifications to ``on_notification``."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        on_notification: NotificationHandler | None = None,
        initial: bytes = b"",
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._core = ClientCore()
        self._decoder = FrameDecoder(max_frame_bytes)
        self._on_notification = on_notification
        self._initial = initial
        self._close_reason = ""
        self._reader_task = asyncio.get_running_loop().create_task(self._read_loop())

    @property
    def closed(self) -> bool:
        return self._core.closed

    @property
    def close_reason(self) -> str:
        return self._close_reason

    async def call(self, method: str, params: Any = None, *, timeout: float = 30.0) -> Any:
        """Call ``method`` and return its result; raises ``RpcCallError``, ``TimeoutError`` or
        ``ConnectionClosed``."""
        request_id, frame, future = self._core.request(method, params)
        try:
            self._writer.write(frame)
            await self._writer.drain()
            async with asyncio.timeout(timeout):
                return await future
        except TimeoutError:
            raise timeout_error(method, timeout) from None
        except (ConnectionError, RuntimeError) as exc:
            if isinstance(exc, ConnectionClosed):
                raise
            raise ConnectionClosed(f"connection lost while calling {method}: {exc}") from exc
        finally:
            self._core.forget(request_id)

    async def notify(self, method: str, params: Any = None) -> None:
        if self._core.closed:
            raise ConnectionClosed(self._close_reason)
        self._writer.write(self._core.notification(method, params))
        await self._writer.drain()

    async def send_raw(self, data: bytes) -> None:
        """Write bytes as they are: for tests that need to misbehave on purpose."""
        self._writer.write(data)
        await self._writer.drain()

    async def wait_closed(self) -> None:
        await asyncio.shield(self._reader_task)

    async def close(self) -> None:
        self._shut("client closed the connection")
        self._reader_task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader_task
        with contextlib.suppress(ConnectionError, OSError):
            await self._writer.wait_closed()

    async def __aenter__(self) -> JsonRpcClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def _shut(self, reason: str) -> None:
        if not self._core.closed:
            self._close_reason = reason
            self._core.fail_all(reason)
        if not self._writer.is_closing():
            self._writer.close()

    async def _read_loop(self) -> None:
        reason = "server closed the connection"
        try:
            data = self._initial
            while True:
                if data:
                    for frame in self._decoder.feed(data):
                        for note in self._core.receive(frame):
                            self._deliver(note.method, note.params)
                data = await self._reader.read(READ_CHUNK_BYTES)
                if not data:
                    if self._decoder.pending_bytes:
                        reason = "server closed the connection in the middle of a message"
                    break
        except FrameTooLarge as exc:
            reason = f"server sent a {exc}"
        except ProtocolViolation as exc:
            reason = str(exc)
        except (ConnectionError, OSError) as exc:
            reason = f"connection lost: {exc}"
        finally:
            self._shut(reason)

    def _deliver(self, method: str, params: Any) -> None:
        if self._on_notification is None:
            return
        try:
            self._on_notification(method, params)
        except Exception:
            logger.exception("notification handler failed for %s", method)
