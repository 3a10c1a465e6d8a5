"""The desktop's JSON-RPC client on the runtime's local socket, driven by the Qt event loop (qasync).

It behaves like the plain asyncio client (:mod:`contracts.ipc.client`) and shares its bookkeeping
(:class:`contracts.ipc.client_core.ClientCore`); what is Qt-specific is how it reads:

* The runtime may stream thousands of ``SessionEvent`` notifications a second. Each turn of the event
  loop dispatches frames for at most ``dispatch_budget`` seconds, then yields to the UI through a
  zero-timeout timer, so a flood never freezes the window.
* It reads the socket only once the frames already read have been dispatched, and Qt buffers at most
  ``READ_BUFFER_BYTES`` from the socket: a runtime that produces faster than the UI consumes fills the
  socket and is slowed down by its own write backpressure, instead of growing the desktop's memory.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from typing import Any

from PySide6.QtCore import QObject, QTimer, QTimerEvent, Signal
from PySide6.QtNetwork import QLocalSocket

from contracts.ipc.client_core import ClientCore, ConnectionClosed, ProtocolViolation, timeout_error
from contracts.ipc.framing import DEFAULT_MAX_FRAME_BYTES, FrameDecoder, FrameTooLarge

logger = logging.getLogger(__name__)

DEFAULT_DISPATCH_BUDGET_SECONDS = 0.006
READ_BUFFER_BYTES = 1024 * 1024
# Same threshold as the runtime's writer: past it, writers wait for the peer to read.
_WRITE_HIGH_WATER = 1024 * 1024
_MAX_TIMER_MS = 2**31 - 1


class QtJsonRpcClient(QObject):
    """Calls methods on the runtime and emits its notifications as ``notification(method, params)``.

    ``disconnected(reason)`` is emitted once, after every waiting call has failed with
    :class:`ConnectionClosed` carrying the same reason. Nothing is dispatched before the next turn
    of the event loop after construction, so slots connected right after it miss nothing.
    """

    notification = Signal(str, object)
    disconnected = Signal(str)

    def __init__(
        self,
        socket: QLocalSocket,
        *,
        initial: bytes = b"",
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        dispatch_budget: float = DEFAULT_DISPATCH_BUDGET_SECONDS,
        start: bool = True,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._socket = socket
        # A socket handed over by a QLocalServer is the server's child: it must outlive the server.
        socket.setParent(self)
        socket.setReadBufferSize(READ_BUFFER_BYTES)
        self._core = ClientCore()
        self._decoder = FrameDecoder(max_frame_bytes)
        self._frames: deque[bytes] = deque()
        self._budget = dispatch_budget
        self._started = False
        self._pumping = False
        self._socket_gone = socket.state() == QLocalSocket.LocalSocketState.UnconnectedState
        self._socket_error = ""
        self._close_reason: str | None = None
        self._finished = False
        self._closed_waiters: list[asyncio.Future[None]] = []
        self._write_waiters: list[asyncio.Future[None]] = []
        self._deadlines: dict[int, tuple[asyncio.Future[Any], str, float]] = {}
        self._resume = QTimer(self)
        self._resume.setSingleShot(True)
        self._resume.setInterval(0)
        self._resume.timeout.connect(self._pump)
        socket.readyRead.connect(self._on_ready_read)
        socket.disconnected.connect(self._on_socket_disconnected)
        socket.errorOccurred.connect(self._on_socket_error)
        socket.bytesWritten.connect(self._on_bytes_written)
        if initial:
            try:
                self._frames.extend(self._decoder.feed(initial))
            except FrameTooLarge as exc:
                self.shut(f"server sent a {exc}", abort=True)
        if start:
            self.start()

    # ------------------------------------------------------------------ state

    @property
    def closed(self) -> bool:
        return self._core.closed

    @property
    def close_reason(self) -> str:
        return self._close_reason or ""

    @property
    def pending_calls(self) -> int:
        return self._core.pending_count

    def start(self) -> None:
        """Begin dispatching (from the next turn of the event loop); idempotent."""
        if not self._started:
            self._started = True
            self._resume.start()

    # ------------------------------------------------------------------ calling

    async def call(self, method: str, params: Any = None, *, timeout: float = 30.0) -> Any:
        """Call ``method`` and return its result.

        Raises ``RpcCallError`` (the runtime's error), ``TimeoutError`` or ``ConnectionClosed``.
        """
        request_id, frame, future = self._core.request(method, params)
        # A QObject timer rather than loop.call_later: qasync's cancel() only flags the handle, whose
        # Qt timer keeps the finished call's future (and its result) alive until the timeout.
        timer_id = self.startTimer(min(_MAX_TIMER_MS, max(0, round(timeout * 1000))))
        self._deadlines[timer_id] = (future, method, timeout)
        try:
            await self._write(frame, until=future)
            return await future
        finally:
            if self._deadlines.pop(timer_id, None) is not None:
                self.killTimer(timer_id)
            self._core.forget(request_id)

    async def notify(self, method: str, params: Any = None) -> None:
        await self._write(self._core.notification(method, params))

    async def send_raw(self, data: bytes) -> None:
        """Write bytes as they are: for tests that need to misbehave on purpose."""
        await self._write(data)

    async def _write(self, data: bytes, until: asyncio.Future[Any] | None = None) -> None:
        if self._close_reason is not None:
            raise ConnectionClosed(self._close_reason)
        self._socket.write(data)
        # Sends now rather than on a later turn of the event loop (about 6% of a no-op round trip).
        self._socket.flush()
        if self._socket.bytesToWrite() <= _WRITE_HIGH_WATER:
            return
        # The runtime is not reading: wait instead of buffering more, but no longer than the call.
        writable = asyncio.get_running_loop().create_future()
        self._write_waiters.append(writable)
        try:
            await asyncio.wait(
                [writable] if until is None else [writable, until], return_when="FIRST_COMPLETED"
            )
        finally:
            writable.cancel()
            if writable in self._write_waiters:
                self._write_waiters.remove(writable)

    def timerEvent(self, event: QTimerEvent) -> None:
        timer_id = event.timerId()
        deadline = self._deadlines.pop(timer_id, None)
        if deadline is None:
            super().timerEvent(event)
            return
        self.killTimer(timer_id)
        future, method, timeout = deadline
        if not future.done():
            future.set_exception(timeout_error(method, timeout))

    def _on_bytes_written(self, _count: int) -> None:
        if self._write_waiters and self._socket.bytesToWrite() <= _WRITE_HIGH_WATER:
            self._wake_writers()

    def _wake_writers(self) -> None:
        waiters, self._write_waiters = self._write_waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    # ------------------------------------------------------------------ reading

    def _on_ready_read(self) -> None:
        # With a backlog the resume timer is already due: pumping here too would run two slices back
        # to back in one turn of the event loop, and the UI's timers would wait for both.
        if not self._resume.isActive():
            self._pump()

    def _pump(self) -> None:
        """Dispatch frames for at most the budget; read the socket only when none are left."""
        if self._pumping or not self._started or self._close_reason is not None:
            return
        # A slot may spin a nested event loop (a modal dialog) and re-enter through readyRead.
        self._pumping = True
        try:
            self._dispatch(time.perf_counter() + self._budget)
        except FrameTooLarge as exc:
            self.shut(f"server sent a {exc}", abort=True)
        except ProtocolViolation as exc:
            self.shut(str(exc), abort=True)
        finally:
            self._pumping = False
        if self._close_reason is not None:
            return
        if self._frames or self._socket.bytesAvailable():
            self._resume.start()
        elif self._socket_gone:
            self._lost()

    def _dispatch(self, deadline: float) -> None:
        frames, receive, notify = self._frames, self._core.receive, self.notification.emit
        while self._close_reason is None:
            if not frames:
                data = bytes(self._socket.readAll().data())
                if not data:
                    return
                frames.extend(self._decoder.feed(data))
                continue
            for note in receive(frames.popleft()):
                notify(note.method, note.params)
            if time.perf_counter() >= deadline:
                return

    # ------------------------------------------------------------------ closing

    def shut(self, reason: str, *, abort: bool = False) -> None:
        """Fail every waiting call with ``reason`` and close the socket.

        Pending writes are flushed first unless ``abort``: used when the runtime broke the protocol
        and may not be reading any more.
        """
        if self._close_reason is None:
            self._close_reason = reason
            self._core.fail_all(reason)
            self._frames.clear()
            self._resume.stop()
            self._wake_writers()
            if abort:
                logger.warning("closing the runtime connection: %s", reason)
        if self._socket.state() == QLocalSocket.LocalSocketState.UnconnectedState:
            self._finish()
        elif abort:
            self._socket.abort()
        else:
            self._socket.disconnectFromServer()

    async def wait_closed(self) -> None:
        if self._finished:
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._closed_waiters.append(waiter)
        await waiter

    async def close(self) -> None:
        self.shut("client closed the connection")
        await self.wait_closed()

    def _on_socket_error(self, error: QLocalSocket.LocalSocketError) -> None:
        if error != QLocalSocket.LocalSocketError.PeerClosedError:
            self._socket_error = self._socket.errorString()

    def _on_socket_disconnected(self) -> None:
        self._socket_gone = True
        if self._close_reason is not None:
            self._finish()
        elif self._started and not self._pumping and not self._resume.isActive():
            # Replies and notifications the runtime sent before it went are still delivered, in order.
            self._pump()

    def _lost(self) -> None:
        if self._decoder.pending_bytes:
            reason = "server closed the connection in the middle of a message"
        elif self._socket_error:
            reason = f"connection lost: {self._socket_error}"
        else:
            reason = "server closed the connection"
        self.shut(reason)

    def _finish(self) -> None:
        if self._finished:
            return
        self._finished = True
        for timer_id in self._deadlines:
            self.killTimer(timer_id)
        self._deadlines.clear()
        waiters, self._closed_waiters = self._closed_waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)
        self.disconnected.emit(self.close_reason)
