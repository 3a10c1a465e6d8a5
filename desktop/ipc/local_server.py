"""The local server one agent-runtime connects back to (see :mod:`contracts.ipc.handshake`).

The desktop listens on a ``QLocalServer`` with a random short name and owner-only access (a ``0700``
Unix socket; a named pipe whose ACL admits only this user on Windows), hands the runtime the name on
its command line and a one-time secret in its environment, and takes the first connection that proves
the secret. Anything else — a wrong proof, garbage, an oversized or late hello, a second runtime — is
cut before another byte of it is read. It behaves like the asyncio listener
(:mod:`contracts.ipc.listener`) used by tools and tests.
"""

from __future__ import annotations

import asyncio
import logging
import secrets

from PySide6.QtCore import QMetaMethod, QMetaObject, QObject, QTimer, Signal
from PySide6.QtNetwork import QAbstractSocket, QLocalServer, QLocalSocket

from contracts.ipc.client_core import ConnectionClosed
from contracts.ipc.framing import DEFAULT_MAX_FRAME_BYTES
from contracts.ipc.handshake import (
    HANDSHAKE_MAX_FRAME_BYTES,
    HANDSHAKE_TIMEOUT_SECONDS,
    SECRET_ENV,
    HandshakeError,
    new_secret,
    verify_hello,
    welcome_frame,
)
from contracts.ipc.transport import check_server_name
from desktop.ipc.client import DEFAULT_DISPATCH_BUDGET_SECONDS, QtJsonRpcClient

logger = logging.getLogger(__name__)

_LISTEN_ATTEMPTS = 3


class RuntimeServer(QObject):
    """Listens for one runtime; ``runtime_connected(client)`` once it has proved the secret.

    Get the client from the signal or with ``await accept()`` (before or after the runtime connected).
    Either way it dispatches nothing until the slots, or the code right after the ``await``, have had
    the chance to connect to it. Once a runtime is authenticated the server stops listening: its name
    is gone and nobody else can connect.
    """

    runtime_connected = Signal(object)
    peer_rejected = Signal(str)

    def __init__(
        self,
        parent: QObject | None = None,
        *,
        handshake_timeout: float = HANDSHAKE_TIMEOUT_SECONDS,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        dispatch_budget: float = DEFAULT_DISPATCH_BUDGET_SECONDS,
    ) -> None:
        super().__init__(parent)
        self._secret = new_secret()
        self._handshake_timeout = handshake_timeout
        self._max_frame_bytes = max_frame_bytes
        self._dispatch_budget = dispatch_budget
        self._handshakes: set[_Handshake] = set()
        self._client: QtJsonRpcClient | None = None
        self._waiters: list[asyncio.Future[QtJsonRpcClient]] = []
        self._closed = False
        self.rejected = 0
        self._server = QLocalServer(self)
        self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self._server.newConnection.connect(self._on_new_connection)
        self._full_name = self._listen()

    def _listen(self) -> str:
        for _ in range(_LISTEN_ATTEMPTS):
            # Short on purpose: macOS limits a Unix socket path (temp dir included) to 104 bytes.
            if self._server.listen(f"cw-{secrets.token_hex(6)}"):
                full_name = self._server.fullServerName()
                try:
                    check_server_name(full_name)
                except ValueError:
                    self._server.close()
                    raise
                return full_name
            if self._server.serverError() != QAbstractSocket.SocketError.AddressInUseError:
                break
        raise OSError(f"cannot listen on a local socket: {self._server.errorString()}")

    @property
    def full_name(self) -> str:
        """What the runtime is given to connect to (``--connect``): a socket path or a pipe name."""
        return self._full_name

    @property
    def is_listening(self) -> bool:
        return self._server.isListening()

    @property
    def client(self) -> QtJsonRpcClient | None:
        """The authenticated runtime, once there is one."""
        return self._client

    def child_environment(self) -> dict[str, str]:
        """What to add to the runtime's environment: the one-time secret (never its command line)."""
        return {SECRET_ENV: self._secret}

    async def accept(self, *, timeout: float = 10.0) -> QtJsonRpcClient:
        """The authenticated runtime as a client. Raises ``TimeoutError`` or ``ConnectionClosed``."""
        if self._client is None:
            if self._closed:
                raise ConnectionClosed("the runtime server was closed before a runtime connected")
            waiter: asyncio.Future[QtJsonRpcClient] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                async with asyncio.timeout(timeout):
                    await waiter
            finally:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
                # Started here, not when the runtime was authenticated, so that the caller's code right
                # after the await connects its slots before the first notification is dispatched.
                if self._client is not None:
                    self._client.start()
        assert self._client is not None
        self._client.start()
        return self._client

    def close(self) -> None:
        """Stop listening, remove the socket and cut unauthenticated peers; a client is not affected."""
        self._stop_listening("the runtime server is closing")
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_exception(ConnectionClosed("the runtime server was closed"))

    # ------------------------------------------------------------------ connections

    def _stop_listening(self, reason: str) -> None:
        self._closed = True
        self._server.close()
        for handshake in list(self._handshakes):
            handshake.refuse(reason)

    def _on_new_connection(self) -> None:
        while self._server.hasPendingConnections():
            socket = self._server.nextPendingConnection()
            handshake = _Handshake(self, socket, self._secret, self._handshake_timeout)
            self._handshakes.add(handshake)
            if self._client is not None:
                handshake.refuse("a runtime is already connected to this server")
            elif self._closed:
                handshake.refuse("the runtime server is closing")
            else:
                handshake.begin()

    def _refused(self, handshake: _Handshake, reason: str) -> None:
        self._handshakes.discard(handshake)
        self.rejected += 1
        logger.warning("refused a local connection: %s", reason)
        self.peer_rejected.emit(reason)

    def _authenticated(self, handshake: _Handshake, socket: QLocalSocket, rest: bytes) -> None:
        self._handshakes.discard(handshake)
        client = QtJsonRpcClient(
            socket,
            initial=rest,
            max_frame_bytes=self._max_frame_bytes,
            dispatch_budget=self._dispatch_budget,
            start=False,
        )
        self._client = client
        # One runtime per server name: nobody else may connect, and whoever is mid-handshake is cut.
        self._stop_listening("another runtime authenticated first")
        listened = self.isSignalConnected(QMetaMethod.fromSignal(self.runtime_connected))
        self.runtime_connected.emit(client)
        waiters, self._waiters = self._waiters, []
        awaited = False
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(client)
                awaited = True
        # Nobody has the client yet: it waits, holding what the runtime sends, until accept() is called.
        if listened and not awaited:
            client.start()


class _Handshake(QObject):
    """One incoming connection until it proves the secret, within a bounded time and size."""

    def __init__(self, server: RuntimeServer, socket: QLocalSocket, secret: str, timeout: float) -> None:
        super().__init__(server)
        self._server = server
        self._socket = socket
        self._secret = secret
        self._buffer = b""
        self._done = False
        # Qt itself then buffers no more of an unauthenticated peer than the hello may be long.
        socket.setReadBufferSize(HANDSHAKE_MAX_FRAME_BYTES + 1)
        self._timeout = timeout
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(lambda: self.refuse(f"no hello within {timeout:g} s"))
        self._connections: list[QMetaObject.Connection] = []

    def begin(self) -> None:
        self._timer.start(round(self._timeout * 1000))
        self._connections = [
            self._socket.readyRead.connect(self._on_ready_read),
            self._socket.disconnected.connect(self._on_disconnected),
        ]
        if self._socket.bytesAvailable():
            self._on_ready_read()

    def _on_ready_read(self) -> None:
        if self._done:
            return
        room = HANDSHAKE_MAX_FRAME_BYTES + 1 - len(self._buffer)
        self._buffer += bytes(self._socket.read(room).data())
        frame, newline, rest = self._buffer.partition(b"\n")
        if not newline:
            if len(self._buffer) > HANDSHAKE_MAX_FRAME_BYTES:
                self.refuse(f"hello larger than {HANDSHAKE_MAX_FRAME_BYTES} bytes")
            return
        try:
            nonce = verify_hello(self._secret, frame)
        except HandshakeError as exc:
            self.refuse(str(exc))
            return
        self._end()
        self._socket.write(welcome_frame(self._secret, nonce))
        self._socket.flush()
        self._server._authenticated(self, self._socket, rest)

    def _on_disconnected(self) -> None:
        self.refuse("peer closed the connection during the handshake")

    def refuse(self, reason: str) -> None:
        if self._done:
            return
        self._end()
        self._socket.abort()
        self._socket.deleteLater()
        self._server._refused(self, reason)

    def _end(self) -> None:
        self._done = True
        self._timer.stop()
        for connection in self._connections:
            QObject.disconnect(connection)
        self.deleteLater()
