"""Serving the dispatcher on one byte stream: the desktop's local socket, or stdio.

* Requests are handled concurrently (``ApproveAction`` must not wait behind a running ``StartTask``),
  at most ``max_in_flight`` at once; past that the connection stops reading, so a flood of requests
  slows its sender down instead of growing memory.
* Writes apply backpressure: when the peer stops reading, notifiers wait rather than buffer without
  bound.
* Frames written in one turn of the event loop leave in one write: a step emits several events back
  to back, and each system call (and each wake-up of the peer) costs more than the bytes.
* A frame over the size limit gets one error reply, then the connection is closed. When the peer goes
  away, handlers still running are cancelled and awaited: nothing is left pending.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import stat
import sys
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, Protocol

from contracts.ipc.framing import (
    DEFAULT_MAX_FRAME_BYTES,
    READ_CHUNK_BYTES,
    FrameDecoder,
    FrameTooLarge,
    encode,
)
from contracts.ipc.handshake import HandshakeError, hello_frame, read_first_frame, verify_welcome
from contracts.ipc.transport import open_stream

from .eager import start_eagerly

if TYPE_CHECKING:
    from .dispatcher import Dispatcher


class FrameHandler(Protocol):
    """What the connection feeds frames to: the :class:`Dispatcher`, or a stand-in that waits for it."""

    async def handle_frame(self, frame: bytes) -> bytes | None: ...


class DeferredDispatcher:
    """Serves as soon as the connection is up, with the dispatcher still being built.

    The runtime's handlers import most of the program (pydantic models, httpx); building them on the
    path from process start to "serving" would cost hundreds of milliseconds. Requests that arrive
    before the dispatcher is ready wait for it, then go through it as usual.
    """

    def __init__(self, ready: Awaitable[Dispatcher]) -> None:
        self._ready = asyncio.ensure_future(ready)

    async def handle_frame(self, frame: bytes) -> bytes | None:
        dispatcher = await asyncio.shield(self._ready)
        return await dispatcher.handle_frame(frame)


logger = logging.getLogger(__name__)

DEFAULT_MAX_IN_FLIGHT = 64
_WRITE_HIGH_WATER = 1024 * 1024


class RpcConnection:
    """One peer: reads frames, runs them through the dispatcher, writes replies and notifications."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        dispatcher: FrameHandler,
        *,
        initial: bytes = b"",
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._dispatcher = dispatcher
        self._initial = initial
        self._decoder = FrameDecoder(max_frame_bytes)
        self._slots = asyncio.Semaphore(max_in_flight)
        self._tasks: set[asyncio.Task[None]] = set()
        self._write_lock = asyncio.Lock()
        self._outgoing: list[bytes] = []
        self._outgoing_bytes = 0
        self._closed = False
        self.close_reason = ""

    @property
    def closed(self) -> bool:
        return self._closed

    async def notify(self, method: str, params: Any = None) -> None:
        """Send a notification (``SessionEvent``); silently dropped once the peer is gone."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self._send(encode(message))

    async def serve(self) -> str:
        """Serve until the peer disconnects or breaks the protocol; returns why it ended."""
        reason = "peer closed the connection"
        try:
            data = self._initial
            while True:
                if data:
                    for frame in self._decoder.feed(data):
                        await self._slots.acquire()
                        task = start_eagerly(self._handle(frame))
                        if task is not None:
                            self._tasks.add(task)
                            task.add_done_callback(self._tasks.discard)
                data = await self._reader.read(READ_CHUNK_BYTES)
                if not data:
                    if self._decoder.pending_bytes:
                        reason = "peer closed the connection in the middle of a message"
                    break
        except FrameTooLarge as exc:
            reason = f"peer sent a {exc}"
            # Imported here: the wire models (pydantic) stay off the path from start to serving.
            from contracts.errors import ErrorCode, ErrorShape
            from contracts.jsonrpc import RpcErrorCode

            shape = ErrorShape(
                code=ErrorCode.INVALID_REQUEST,
                message=f"Message larger than {exc.limit} bytes; closing the connection",
                details={"maxFrameBytes": exc.limit},
            )
            error = {
                "code": int(RpcErrorCode.INVALID_REQUEST),
                "message": shape.message,
                "data": shape.to_wire(),
            }
            await self._send(encode({"jsonrpc": "2.0", "id": None, "error": error}))
        except (ConnectionError, OSError) as exc:
            reason = f"connection lost: {exc}"
        finally:
            await self._shutdown(reason)
        return reason

    async def finish(self) -> None:
        """Close once every request already read has been answered (after ``Shutdown``)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
        await self._shutdown("the session ended")

    async def _handle(self, frame: bytes) -> None:
        try:
            reply = await self._dispatcher.handle_frame(frame)
            if reply is not None:
                await self._send(reply)
        finally:
            self._slots.release()

    async def _send(self, data: bytes) -> None:
        if self._closed or self._writer.is_closing():
            return
        if not self._outgoing:
            asyncio.get_running_loop().call_soon(self._flush)
        self._outgoing.append(data)
        self._outgoing_bytes += len(data)
        if self._writer.transport.get_write_buffer_size() + self._outgoing_bytes > _WRITE_HIGH_WATER:
            self._flush()
            async with self._write_lock:
                with contextlib.suppress(ConnectionError, OSError):
                    await self._writer.drain()

    def _flush(self) -> None:
        data, self._outgoing, self._outgoing_bytes = b"".join(self._outgoing), [], 0
        if not data or self._writer.is_closing():
            return
        try:
            self._writer.write(data)
        except (ConnectionError, OSError):
            self._writer.close()

    async def _shutdown(self, reason: str) -> None:
        if self._closed:
            return
        self.close_reason = reason
        logger.info("JSON-RPC connection ended: %s", reason)
        for task in list(self._tasks):
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(*self._tasks, return_exceptions=True)
        self._closed = True
        self._flush()
        with contextlib.suppress(ConnectionError, OSError):
            await self._writer.drain()
        self._writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await self._writer.wait_closed()


async def connect_to_desktop(
    name: str, secret: str
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, bytes]:
    """Connect to the desktop's server and authenticate both ways (see :mod:`contracts.ipc.handshake`).

    Returns the stream and any bytes that arrived right behind the desktop's welcome.
    """
    reader, writer = await open_stream(name)
    try:
        frame, nonce = hello_frame(secret)
        writer.write(frame)
        await writer.drain()
        welcome, rest = await read_first_frame(reader)
        verify_welcome(secret, nonce, welcome)
    except (HandshakeError, FrameTooLarge, TimeoutError) as exc:
        writer.close()
        raise HandshakeError(f"could not authenticate the desktop at {name}: {exc}") from exc
    except BaseException:
        writer.close()
        raise
    return reader, writer, rest


async def open_stdio() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """stdin/stdout as a stream pair, for headless clients that spawn the runtime with pipes."""
    for stream in (sys.stdin, sys.stdout):
        mode = os.fstat(stream.fileno()).st_mode
        if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)):
            raise ValueError("--stdio needs stdin and stdout connected to pipes (or a terminal)")
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=READ_CHUNK_BYTES)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    # Frames go to a duplicate of fd 1, and fd 1 itself is pointed at stderr: a stray print() from
    # anywhere in the process then lands in the log instead of corrupting the frame stream.
    stdout = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    transport, protocol = await loop.connect_write_pipe(
        lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), stdout
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return reader, writer
