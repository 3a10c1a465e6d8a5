"""One Cowork window per user and data folder: a second start hands its request to the running app.

The running app listens on a local socket (``QLocalServer``: a Unix socket, a named pipe on Windows)
whose name is derived from the user and the data folder, so two users — or two data folders, as tests
use — never meet. A second ``cowork`` or ``cowork open DIR`` connects, sends one JSON line
(``{"folder": …, "task": …}``) and waits for ``ok``; the running window raises itself and opens a
conversation for the folder, and the second process ends. A socket left behind by a crashed app
answers nobody: it is removed and the new app listens in its place.
"""

from __future__ import annotations

import getpass
import hashlib
import json
import logging
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QAbstractSocket, QLocalServer, QLocalSocket

__all__ = ["InstanceRequest", "InstanceServer", "hand_over", "instance_name"]

logger = logging.getLogger(__name__)

CONNECT_TIMEOUT_MS = 1000
ANSWER_TIMEOUT_MS = 5000
_MAX_REQUEST_BYTES = 64 * 1024
_ACK = b"ok\n"

InstanceRequest = dict[str, str | None]
"""What a second start asks for: ``folder`` (None: just show the window) and ``task``."""


def instance_name(data_dir: Path, user: str | None = None) -> str:
    """The socket's name for this user and data folder (short: Unix socket paths are limited)."""
    who = user if user is not None else _user()
    digest = hashlib.sha256(f"{who}\0{data_dir.expanduser().absolute()}".encode()).hexdigest()[:24]
    return f"cowork-{digest}"


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no user name (a container's unnamed uid): the home folder tells users apart
        return str(Path.home())


def hand_over(name: str, folder: str | None, task: str | None = None) -> bool:
    """Give the running app ``folder`` (and ``task``); True when it took them, False when no app
    answers (then this process is the app). Blocking, bounded: it runs before any window exists."""
    socket = QLocalSocket()
    socket.connectToServer(name)
    if not socket.waitForConnected(CONNECT_TIMEOUT_MS):
        return False
    try:
        socket.write(json.dumps({"folder": folder, "task": task}).encode() + b"\n")
        if not socket.waitForBytesWritten(ANSWER_TIMEOUT_MS):
            return False
        answer = b""
        while not answer.endswith(b"\n"):
            if not socket.waitForReadyRead(ANSWER_TIMEOUT_MS):
                return False
            answer += bytes(socket.readAll().data())
        return answer == _ACK
    finally:
        socket.disconnectFromServer()


class InstanceServer(QObject):
    """The running app's end: ``requested(dict)`` for each request a second start hands over."""

    requested = Signal(object)

    def __init__(self, name: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self._server = QLocalServer(self)
        self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self._server.newConnection.connect(self._accept)

    def listen(self) -> bool:
        """Start listening; False (logged) when the name is taken by an app that answers or cannot be
        freed — the app then runs without handing over, as before."""
        if self._server.listen(self.name):
            return True
        if self._server.serverError() == QAbstractSocket.SocketError.AddressInUseError:
            probe = QLocalSocket()
            probe.connectToServer(self.name)
            if probe.waitForConnected(CONNECT_TIMEOUT_MS):
                probe.disconnectFromServer()
                logger.warning("another Cowork app listens on %s", self.name)
                return False
            QLocalServer.removeServer(self.name)  # left by an app that ended without closing it
            if self._server.listen(self.name):
                return True
        logger.warning("no single-instance socket %s: %s", self.name, self._server.errorString())
        return False

    def close(self) -> None:
        self._server.close()

    def _accept(self) -> None:
        while (connection := self._server.nextPendingConnection()) is not None:
            buffer = bytearray()
            connection.readyRead.connect(lambda c=connection, b=buffer: self._read(c, b))
            connection.disconnected.connect(connection.deleteLater)
            if connection.bytesAvailable():  # arrived with the connection: no readyRead will say so
                self._read(connection, buffer)

    def _read(self, connection: QLocalSocket, buffer: bytearray) -> None:
        buffer += bytes(connection.readAll().data())
        if len(buffer) > _MAX_REQUEST_BYTES:
            connection.abort()
            return
        if not buffer.endswith(b"\n"):
            return
        try:
            data = json.loads(bytes(buffer))
            folder, task = data.get("folder"), data.get("task")
            if not (folder is None or isinstance(folder, str)) or not (task is None or isinstance(task, str)):
                raise ValueError("folder and task must be strings")
        except (ValueError, AttributeError) as exc:
            logger.warning("a second start sent an unreadable request: %s", exc)
            connection.abort()
            return
        connection.write(_ACK)
        connection.flush()
        self.requested.emit({"folder": folder, "task": task})
