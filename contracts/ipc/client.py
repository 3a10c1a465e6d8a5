"""A plain asyncio JSON-RPC client for tests, tooling, benchmarks and headless use.

It speaks the same framing and handshake as the desktop's Qt client and shares its bookkeeping
(:class:`contracts.ipc.client_core.ClientCore`). It is driven by transport callbacks rather than a
reader task: a reply settles its call in the same event-loop turn that reads it, which is a tenth of
a no-op round trip on the IPC benchmark.
"""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Any, cast

from contracts.ipc.client_core import ClientCore, ConnectionClosed, ProtocolViolation, timeout_error
from contracts.ipc.framing import DEFAULT_MAX_FRAME_BYTES, FrameDecoder, FrameTooLarge

logger = logging.getLogger(__name__)

NotificationHandler = Callable[[str, Any], None]


class JsonRpcClient:
    """Calls methods on a connected server and hands its notifications to ``on_notification``.

    Build one with :meth:`over_transport` (a socket) or :meth:`ChildProcess.spawn` (a child process
    on stdio).
    """

    def __init__(
        self,
        transport: asyncio.WriteTransport,
        *,
        on_notification: NotificationHandler | None = None,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
    ) -> None:
        self._transport = transport
        self._core = ClientCore()
        self._decoder = FrameDecoder(max_frame_bytes)
        self.on_notification = on_notification
        self._close_reason = ""
        self._closed = asyncio.get_running_loop().create_future()
        self._writable = asyncio.Event()
        self._writable.set()

    # ------------------------------------------------------------------ construction

    @classmethod
    def over_transport(
        cls,
        transport: asyncio.Transport,
        *,
        initial: bytes = b"",
        on_notification: NotificationHandler | None = None,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
    ) -> JsonRpcClient:
        """Take over a connected socket transport; ``initial`` holds bytes already read from it."""
        client = cls(transport, on_notification=on_notification, max_frame_bytes=max_frame_bytes)
        transport.set_protocol(_SocketProtocol(client))
        if initial:
            client.feed(initial)
        return client

    # ------------------------------------------------------------------ calling

    @property
    def closed(self) -> bool:
        return self._core.closed

    @property
    def close_reason(self) -> str:
        return self._close_reason

    @property
    def pending_calls(self) -> int:
        return self._core.pending_count

    async def call(self, method: str, params: Any = None, *, timeout: float = 30.0) -> Any:
        """Call ``method`` and return its result.

        Raises ``RpcCallError`` (the server's error), ``TimeoutError`` or ``ConnectionClosed``.
        """
        request_id, frame, future = self._core.request(method, params)
        # One timer on the call's future rather than asyncio.timeout(): a third cheaper per call.
        timer = future.get_loop().call_later(timeout, _expire, future, method, timeout)
        try:
            await self._write(frame, until=future)
            return await future
        finally:
            timer.cancel()
            self._core.forget(request_id)

    async def notify(self, method: str, params: Any = None) -> None:
        await self._write(self._core.notification(method, params))

    async def send_raw(self, data: bytes) -> None:
        """Write bytes as they are: for tests that need to misbehave on purpose."""
        await self._write(data)

    async def _write(self, frame: bytes, until: asyncio.Future[Any] | None = None) -> None:
        if self._core.closed:
            raise ConnectionClosed(self._close_reason)
        self._transport.write(frame)
        if self._writable.is_set():
            return
        # The server is not reading: wait instead of buffering more, but no longer than the call.
        writable = asyncio.ensure_future(self._writable.wait())
        try:
            await asyncio.wait(
                [writable] if until is None else [writable, until], return_when="FIRST_COMPLETED"
            )
        finally:
            writable.cancel()

    # ------------------------------------------------------------------ closing

    async def wait_closed(self) -> None:
        await asyncio.shield(self._closed)

    async def close(self) -> None:
        self.shut("client closed the connection")
        await self.wait_closed()

    async def __aenter__(self) -> JsonRpcClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def shut(self, reason: str) -> None:
        """Fail every waiting call with ``reason`` and close the transport."""
        if not self._core.closed:
            self._close_reason = reason
            self._core.fail_all(reason)
            self._writable.set()
        if not self._transport.is_closing():
            self._transport.close()
        else:
            self._finished()

    # ------------------------------------------------------------------ transport callbacks

    def feed(self, data: bytes) -> None:
        try:
            for frame in self._decoder.feed(data):
                for note in self._core.receive(frame):
                    self._deliver(note.method, note.params)
        except FrameTooLarge as exc:
            self.shut(f"server sent a {exc}")
        except ProtocolViolation as exc:
            self.shut(str(exc))

    def lost(self, exc: BaseException | None) -> None:
        if exc is not None:
            reason = f"connection lost: {exc}"
        elif self._decoder.pending_bytes:
            reason = "server closed the connection in the middle of a message"
        else:
            reason = "server closed the connection"
        self.shut(reason)
        self._finished()

    def pause_writing(self) -> None:
        self._writable.clear()

    def resume_writing(self) -> None:
        self._writable.set()

    def _finished(self) -> None:
        if not self._closed.done():
            self._closed.set_result(None)

    def _deliver(self, method: str, params: Any) -> None:
        if self.on_notification is None:
            return
        try:
            self.on_notification(method, params)
        except Exception:
            logger.exception("notification handler failed for %s", method)


def _expire(future: asyncio.Future[Any], method: str, timeout: float) -> None:
    if not future.done():
        future.set_exception(timeout_error(method, timeout))


class _SocketProtocol(asyncio.Protocol):
    def __init__(self, client: JsonRpcClient) -> None:
        self._client = client

    def data_received(self, data: bytes) -> None:
        self._client.feed(data)

    def eof_received(self) -> bool:
        return False  # close our side too

    def connection_lost(self, exc: Exception | None) -> None:
        self._client.lost(exc)

    def pause_writing(self) -> None:
        self._client.pause_writing()

    def resume_writing(self) -> None:
        self._client.resume_writing()


class ChildProcess:
    """A runtime started with ``--stdio``: JSON-RPC on its stdin/stdout, its log on stderr."""

    def __init__(self, transport: asyncio.SubprocessTransport, exited: asyncio.Future[int]) -> None:
        self._transport = transport
        self._exited = exited

    @classmethod
    async def spawn(
        cls,
        argv: Sequence[str],
        *,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        on_notification: NotificationHandler | None = None,
        on_stderr: Callable[[bytes], None] | None = None,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        own_process_group: bool = False,
    ) -> tuple[JsonRpcClient, ChildProcess]:
        """Start ``argv`` with pipes. ``own_process_group``: the terminal's Ctrl-C reaches only the
        parent, which decides what it means (cancel the task first, stop on the second)."""
        loop = asyncio.get_running_loop()
        group: dict[str, Any] = {}
        if own_process_group:
            if sys.platform == "win32":
                group["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP
            else:
                group["start_new_session"] = True
        protocol = _ChildProtocol(on_stderr, loop.create_future())
        transport, _ = await loop.subprocess_exec(
            lambda: protocol,
            *argv,
            env=env,
            cwd=cwd,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            **group,
        )
        stdin = cast(asyncio.WriteTransport, transport.get_pipe_transport(0))
        client = JsonRpcClient(stdin, on_notification=on_notification, max_frame_bytes=max_frame_bytes)
        protocol.attach(client)
        return client, cls(transport, protocol.exited)

    @property
    def pid(self) -> int:
        return self._transport.get_pid()

    async def wait(self) -> int:
        """The exit status, once the process has ended and its pipes are drained."""
        status = await asyncio.shield(self._exited)
        self._transport.close()
        return status

    def kill(self) -> None:
        self._transport.kill()


class _ChildProtocol(asyncio.SubprocessProtocol):
    """stdout carries frames, stderr goes to ``on_stderr`` (the child's log), stdin takes requests."""

    def __init__(self, on_stderr: Callable[[bytes], None] | None, exited: asyncio.Future[int]) -> None:
        self._client: JsonRpcClient | None = None
        self._early: list[bytes] = []
        self._early_loss: tuple[Exception | None] | None = None
        self._on_stderr = on_stderr
        self._transport: asyncio.SubprocessTransport | None = None
        self.exited = exited

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.SubprocessTransport, transport)

    def process_exited(self) -> None:
        assert self._transport is not None
        status = self._transport.get_returncode()
        if not self.exited.done() and status is not None:
            self.exited.set_result(status)

    def attach(self, client: JsonRpcClient) -> None:
        self._client = client
        for data in self._early:
            client.feed(data)
        self._early.clear()
        if self._early_loss is not None:
            # The child closed its stdout (died at once, say) before the client existed: without this
            # the first call would wait for its timeout instead of failing with ConnectionClosed.
            client.lost(self._early_loss[0])

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd == 2:
            if self._on_stderr is not None:
                self._on_stderr(data)
        elif self._client is None:
            self._early.append(data)
        else:
            self._client.feed(data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd != 1:
            return
        if self._client is None:
            self._early_loss = (exc,)
        else:
            self._client.lost(exc)

    def pause_writing(self) -> None:
        if self._client is not None:
            self._client.pause_writing()

    def resume_writing(self) -> None:
        if self._client is not None:
            self._client.resume_writing()
