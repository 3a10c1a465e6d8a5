"""A runtime forked by the runtime's fork server instead of started anew (POSIX, ``cowork exec``).

A fresh runtime spends most of its start importing its handlers; the fork server
(``agent_runtime.fork_server``, wire in :mod:`contracts.ipc.fork_wire`) has done that once and forks a
child per request. :func:`fork_runtime` asks it for one with this client's environment, folder and
three pipes, and returns the same pair :meth:`contracts.ipc.client.ChildProcess.spawn` does: a JSON-RPC
client on the child's stdin/stdout and a :class:`ForkedChild` to wait for or kill it. When no server
answers it returns ``None`` — this run spawns its runtime — and starts one as the program exits
(detached, as the embedded backend is), which serves the next runs and stops by itself after
``COWORK_BACKEND_IDLE_TIMEOUT``.

Used only where a spawned runtime would be ``python -P -m agent_runtime`` run by this interpreter: not
on Windows, not in the frozen app, not with ``COWORK_RUNTIME_EXECUTABLE``; ``COWORK_RUNTIME_FORK_SERVER=0``
turns it off. The server is started with an environment that carries no secret (an allowlist), and
the client trusts a socket only in a folder that is its user's alone and only if the server at the
other end runs as that user.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from contracts.ipc.client import ChildProcess, JsonRpcClient, NotificationHandler
from contracts.ipc.fork_wire import (
    ENABLE_VARIABLE,
    FRAME_HEADER,
    SOCKET_DIR_NAME,
    SOCKET_NAME,
    PeerRefused,
    check_peer,
    decode_frame_length,
    encode_frame,
    peer_uid,
    private_dir_problem,
)
from contracts.local_backend import DEFAULT_IDLE_TIMEOUT_S, idle_timeout_from

__all__ = ["ForkedChild", "fork_runtime", "fork_server_dir", "fork_server_usable", "start_runtime"]

REPLY_TIMEOUT_S = 5.0
UNKNOWN_STATUS = 255
"""The exit status when the server went away before it could report the child's."""
_SOCKET_PATH_LIMIT = 100  # sun_path is 104 bytes on macOS, 108 on Linux, with its terminating NUL
_SERVER_VARIABLES = (
    "PATH",
    "HOME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TMPDIR",
    "PYTHONPATH",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONPYCACHEPREFIX",
    "VIRTUAL_ENV",
)
"""All the server is given of the client's environment: what the interpreter needs to import the
same modules the same way. Tokens and keys stay out; each child gets its client's environment."""


def fork_server_usable(environ: Mapping[str, str], runtime_argv: Sequence[str]) -> bool:
    """Whether this run may use the fork server: on, POSIX, and the runtime is this interpreter's
    ``-P -m agent_runtime`` (the server runs exactly that)."""
    if sys.platform == "win32" or getattr(sys, "frozen", False):
        return False
    if environ.get(ENABLE_VARIABLE, "1").strip() in ("0", "false", "no", "off"):
        return False
    return list(runtime_argv) == [sys.executable, "-P", "-m", "agent_runtime"]


def fork_server_dir(data_dir: Path, environ: Mapping[str, str]) -> Path:
    """The server's folder for this interpreter and module path, under the user data directory: a
    client of another Python or another ``PYTHONPATH`` gets a server of its own."""
    identity = json.dumps([sys.executable, sys.version, environ.get("PYTHONPATH", "")])
    return data_dir / SOCKET_DIR_NAME / hashlib.sha256(identity.encode()).hexdigest()[:12]


class ForkedChild:
    """The forked runtime, as :class:`contracts.ipc.client.ChildProcess` offers a spawned one."""

    def __init__(self, pid: int, control: socket.socket, drained: asyncio.Future[None]) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._control = control
        self._drained = drained
        self._exited: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._watch = asyncio.ensure_future(self._watch_exit())

    async def _watch_exit(self) -> None:
        loop = asyncio.get_running_loop()
        status = UNKNOWN_STATUS
        try:
            while True:
                message = await _read_frame(loop, self._control)
                if message is None:
                    # The server went away: the child runs on, no longer anyone's to report. Its
                    # stdout closes when it ends; after that its pid is watched until it is gone.
                    await asyncio.shield(self._drained)
                    # No event tells of another process's end (pidfd is Linux-only): poll.
                    while _alive(self.pid):  # noqa: ASYNC110
                        await asyncio.sleep(0.05)
                    break
                if "exit" in message:
                    status = int(message["exit"])
                    break
        except (OSError, ValueError):
            pass
        finally:
            self._control.close()
        self.returncode = status
        if not self._exited.done():
            self._exited.set_result(status)

    async def wait(self) -> int:
        """The exit status, once the process has ended and its output is read to the end."""
        status = await asyncio.shield(self._exited)
        with contextlib.suppress(TimeoutError):
            # A process the runtime started may hold its stdout a moment longer; not forever.
            async with asyncio.timeout(2.0):
                await asyncio.shield(self._drained)
        return status

    def send_signal(self, number: int) -> None:
        """To the child's process group (it leads a session of its own), as long as it runs: after
        its exit is reported its pid may belong to another process."""
        if self._exited.done():
            return
        try:
            os.killpg(self.pid, number)
        except ProcessLookupError:
            # Not yet the leader of its group (just forked): the process itself.
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, number)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


async def fork_runtime(
    directory: Path,
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: str | None,
    on_notification: NotificationHandler | None = None,
    on_stderr: Callable[[bytes], None] | None = None,
    server_environ: Mapping[str, str] | None = None,
) -> tuple[JsonRpcClient, ForkedChild] | None:
    """A runtime forked with ``argv`` (after the program: ``["--stdio"]``), or ``None`` when no fork
    server could serve — one is started then (with ``server_environ``'s allowlisted variables and idle
    timeout) for the runs that follow."""
    path = directory / SOCKET_NAME
    if len(os.fsencode(path)) > _SOCKET_PATH_LIMIT:
        return None  # a user data directory this deep has no room for a socket: spawn
    loop = asyncio.get_running_loop()
    control = await _connect(loop, directory)
    if control is None:
        _start_server_at_exit(directory, server_environ if server_environ is not None else env)
        return None
    stdin_read, stdin_write = os.pipe()
    stdout_read, stdout_write = os.pipe()
    stderr_read, stderr_write = os.pipe()
    ours = [stdin_write, stdout_read, stderr_read]
    theirs = [stdin_read, stdout_write, stderr_write]
    try:
        request = encode_frame({"argv": list(argv), "env": dict(env), "cwd": cwd})
        async with asyncio.timeout(REPLY_TIMEOUT_S):
            sent = socket.send_fds(control, [request], theirs)
            if sent < len(request):
                await loop.sock_sendall(control, request[sent:])
            reply = await _read_frame(loop, control)
    except (OSError, ValueError, TimeoutError):
        reply = None
    finally:
        for fd in theirs:
            os.close(fd)  # the server holds its own copies now (or the request failed)
    if reply is None or "pid" not in reply:
        for fd in ours:
            os.close(fd)
        control.close()
        if reply is not None and reply.get("restart"):
            _start_server_at_exit(directory, server_environ if server_environ is not None else env)
        return None
    return await _attach(loop, int(reply["pid"]), control, ours, on_notification, on_stderr)


async def _connect(loop: asyncio.AbstractEventLoop, directory: Path) -> socket.socket | None:
    """A connection to the server of ``directory`` if one runs there as this user; else ``None``."""
    if private_dir_problem(directory) is not None:
        return None
    control = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    control.setblocking(False)
    try:
        await loop.sock_connect(control, str(directory / SOCKET_NAME))
        check_peer(peer_uid(control))
    except (OSError, PeerRefused):
        control.close()
        return None
    return control


async def _attach(
    loop: asyncio.AbstractEventLoop,
    pid: int,
    control: socket.socket,
    ours: list[int],
    on_notification: NotificationHandler | None,
    on_stderr: Callable[[bytes], None] | None,
) -> tuple[JsonRpcClient, ForkedChild]:
    stdin_fd, stdout_fd, stderr_fd = ours
    drained: asyncio.Future[None] = loop.create_future()
    stdin_transport, stdin_protocol = await loop.connect_write_pipe(
        _Stdin, os.fdopen(stdin_fd, "wb", buffering=0)
    )
    client = JsonRpcClient(stdin_transport, on_notification=on_notification)
    stdin_protocol.client = client
    await loop.connect_read_pipe(lambda: _Stdout(client, drained), os.fdopen(stdout_fd, "rb", buffering=0))
    await loop.connect_read_pipe(lambda: _Stderr(on_stderr), os.fdopen(stderr_fd, "rb", buffering=0))
    return client, ForkedChild(pid, control, drained)


class _Stdin(asyncio.Protocol):
    client: JsonRpcClient | None = None

    def pause_writing(self) -> None:
        if self.client is not None:
            self.client.pause_writing()

    def resume_writing(self) -> None:
        if self.client is not None:
            self.client.resume_writing()


class _Stdout(asyncio.Protocol):
    def __init__(self, client: JsonRpcClient, drained: asyncio.Future[None]) -> None:
        self._client = client
        self._drained = drained

    def data_received(self, data: bytes) -> None:
        self._client.feed(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self._client.lost(exc)
        if not self._drained.done():
            self._drained.set_result(None)


class _Stderr(asyncio.Protocol):
    def __init__(self, on_stderr: Callable[[bytes], None] | None) -> None:
        self._on_stderr = on_stderr

    def data_received(self, data: bytes) -> None:
        if self._on_stderr is not None:
            self._on_stderr(data)


async def _read_frame(loop: asyncio.AbstractEventLoop, sock: socket.socket) -> dict[str, Any] | None:
    """The next frame from the server; ``None`` when it closed the connection."""
    header = await _read_exactly(loop, sock, FRAME_HEADER.size)
    if header is None:
        return None
    body = await _read_exactly(loop, sock, decode_frame_length(header))
    if body is None:
        return None
    message = json.loads(body)
    if not isinstance(message, dict):
        raise ValueError("a fork-server frame is a JSON object")
    return message


async def _read_exactly(loop: asyncio.AbstractEventLoop, sock: socket.socket, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        chunk = await loop.sock_recv(sock, size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False  # the pid belongs to another user's process now: ours is gone
    return True


def _start_server_at_exit(directory: Path, environ: Mapping[str, str]) -> None:
    """Start the server once this run is over: its imports (a third of a second of a core) would
    otherwise compete with this run's own start, which spawns its runtime meanwhile."""
    atexit.register(_start_server, directory, dict(environ))


_started: list[subprocess.Popen[bytes]] = []
"""Servers this process started: held so no finalizer warns of a child still running."""


def _start_server(directory: Path, environ: Mapping[str, str]) -> None:
    """Start a fork server for ``directory``, detached (a session of its own, so neither Ctrl-C nor
    the end of this run reaches it). Two clients starting one at once end with one: the second finds
    the first's lock taken and exits."""
    _started[:] = [process for process in _started if process.poll() is None]
    try:
        idle_timeout = idle_timeout_from(environ)
    except ValueError:
        idle_timeout = DEFAULT_IDLE_TIMEOUT_S
    try:
        directory.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        directory.mkdir(exist_ok=True, mode=0o700)
        if private_dir_problem(directory.parent) is not None or private_dir_problem(directory) is not None:
            return
        env = {key: environ[key] for key in _SERVER_VARIABLES if key in environ}
        env["PYTHONUNBUFFERED"] = "1"
        command = [sys.executable, "-P", "-m", "agent_runtime", "fork-server"]
        command += ["--socket-dir", str(directory), "--idle-timeout", f"{idle_timeout:g}"]
        with (directory / "log").open("ab") as log:
            _started.append(
                subprocess.Popen(
                    command,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=log,
                    env=env,
                    cwd="/",
                    start_new_session=True,
                )
            )
    except OSError:
        return  # no server this time: every run still spawns its runtime


async def start_runtime(
    command: Sequence[str],
    mode: Sequence[str],
    *,
    env: dict[str, str],
    cwd: str | None,
    environ: Mapping[str, str],
    data_dir: Path,
    on_notification: NotificationHandler | None = None,
    on_stderr: Callable[[bytes], None] | None = None,
) -> tuple[JsonRpcClient, ChildProcess | ForkedChild]:
    """The runtime ``command`` + ``mode`` with pipes in its own process group: forked by the fork
    server of ``data_dir`` where it may be (:func:`fork_server_usable`), else spawned."""
    if fork_server_usable(environ, command):
        forked = await fork_runtime(
            fork_server_dir(data_dir, environ),
            mode,
            env=env,
            cwd=cwd,
            on_notification=on_notification,
            on_stderr=on_stderr,
            server_environ=environ,
        )
        if forked is not None:
            return forked
    return await ChildProcess.spawn(
        [*command, *mode],
        env=env,
        cwd=cwd,
        on_notification=on_notification,
        on_stderr=on_stderr,
        own_process_group=True,
    )
