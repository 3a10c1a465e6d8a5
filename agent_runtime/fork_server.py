"""The runtime's fork server: a process that has imported the runtime and forks one per ``cowork exec``.

``cowork-agent-runtime fork-server --socket-dir DIR --idle-timeout S`` (POSIX only). Importing the
session host and the tool runtime — pydantic's models, httpx, the policy engine — is most of a fresh
runtime's start; this process does it once, then forks a child for each request, which runs
:func:`agent_runtime.main.main` as a freshly started runtime would (as ``multiprocessing``'s
forkserver does for its workers). The wire is :mod:`contracts.ipc.fork_wire`.

Trust boundary. The server holds nothing a client does not already have: it is started with an
environment stripped to what the interpreter needs (no backend token, no gateway key), it opens no
connection, it has no session. What a child gets — its environment, its working folder, its stdin,
stdout and stderr — comes only from the client that asked for it, and a client is served only if it
is run by the server's own user: its socket is in a folder only that user can enter (0700, checked
before listening) and every connection's peer user is checked (``SO_PEERCRED``/``LOCAL_PEERCRED``)
before a byte of it is read. Such a client could run the runtime itself with the same rights; the
server gives it nothing more than the time the imports take. Another user is refused. A request's
environment passes through the server's memory on its way to the child and is not kept (freed
memory may still hold it, readable only by that same user, as any of its processes' memory is).

A child is the runtime as if started anew: its own session (``setsid``, as a spawned runtime gets
with ``start_new_session``), the client's environment in place of the server's (``os.environ``
cleared, then filled), the client's folder, the client's descriptors on 0, 1 and 2 and every other
descriptor closed, the signal handlers as a fresh interpreter has them, ``random`` reseeded by Python
at fork, logging configured by ``main`` after the fork. Forking is only safe with one thread: the
imports happen on the main thread before serving, and a request that finds another thread running is
refused. What a fork cannot renew: the hash seed (``PYTHONHASHSEED``) is the server's, shared by its
children, and interpreter settings read once at start (``-X`` options, the locale's encoding) are the
server's — the client starts a server with its own interpreter and flags. A server notices that the
runtime's source changed since it imported it, refuses, and exits: the client spawns meanwhile and
starts a fresh server.

It stops on its own after ``--idle-timeout`` seconds without a request or a running child, like the
embedded backend, and leaves the folder as it found it.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import fcntl
import gc
import importlib
import json
import os
import selectors
import signal
import socket
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from contracts.ipc.fork_wire import (
    FRAME_HEADER,
    SOCKET_NAME,
    PeerRefused,
    check_peer,
    decode_frame_length,
    encode_frame,
    peer_uid,
    private_dir_problem,
)

__all__ = ["command_main"]

LOCK_NAME = "lock"
REQUEST_TIMEOUT_S = 5.0
_PRELOADED = (
    "agent_runtime.main",
    "agent_runtime.agent_host.session.host",
    "agent_runtime.agent_host.session.rpc.connection",
    "agent_runtime.agent_host.session.rpc.dispatcher",
    "agent_runtime.agent_host.mcp.configured",
    "agent_runtime.tool_runtime",
    "contracts.ipc.handshake",
    "contracts.enums",
)
_PRELOADED_IF_INSTALLED = (
    # What a spawned runtime imports later on its way to the first request (measured with
    # ``-X importtime``): uvloop, httpx's async backend, the policy push channel's websockets client.
    "uvloop",
    "anyio",
    "sniffio",
    "websockets.asyncio.client",
    "websockets.exceptions",
    "encodings.latin_1",
    "encodings.utf_8_sig",
)
_WATCHED_PACKAGES = ("agent_runtime", "contracts")


@dataclass
class _Server:
    listener: socket.socket
    selector: selectors.BaseSelector
    wakeup: tuple[int, int]
    idle_timeout: float
    sources: dict[str, float]
    socket_inode: int
    lock: int
    children: dict[int, socket.socket | None] = field(default_factory=dict)
    accepting: bool = True
    last_active: float = field(default_factory=time.monotonic)


def command_main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="cowork-agent-runtime fork-server")
    parser.add_argument("--socket-dir", type=Path, required=True)
    parser.add_argument("--idle-timeout", type=float, required=True)
    args = parser.parse_args(argv)
    if sys.platform == "win32":
        print("fork-server: POSIX only", file=sys.stderr)
        return 2
    directory: Path = args.socket_dir
    problem = private_dir_problem(directory)
    if problem is not None:
        print(f"fork-server: {problem}", file=sys.stderr)
        return 2
    lock = os.open(directory / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0  # another server of this folder is running (or starting): it serves
    _preload()
    # The imported modules' objects go to the permanent generation: a child's collections never walk
    # them, so they neither cost it time nor copy the pages it shares with this process (gc docs).
    gc.collect()
    gc.freeze()
    listener = _listen(directory / SOCKET_NAME)
    read_end, write_end = os.pipe()
    for end in (read_end, write_end):
        os.set_blocking(end, False)
        os.set_inheritable(end, False)
    server = _Server(
        listener,
        selectors.DefaultSelector(),
        (read_end, write_end),
        args.idle_timeout,
        _source_times(),
        os.stat(directory / SOCKET_NAME).st_ino,
        lock,
    )
    previous = signal.set_wakeup_fd(write_end)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # a handler, so the wakeup pipe hears of it
    try:
        return _serve(server)
    finally:
        signal.set_wakeup_fd(previous)
        _stop_listening(server)


def _stop_listening(server: _Server) -> None:
    """Remove the socket (if it is still this server's), close it and let go of the lock: new clients
    find none, and the next one starts a server of its own while this one reports on its children."""
    if server.listener.fileno() < 0:
        return
    path = server.listener.getsockname()
    with contextlib.suppress(OSError):
        if os.stat(path).st_ino == server.socket_inode:  # not one a newer server put in its place
            os.unlink(path)
    server.listener.close()
    os.close(server.lock)


def _preload() -> None:
    # As agent_runtime.main's background load does, but on this thread: no other thread may exist
    # when the server forks.
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
    for module in _PRELOADED:
        importlib.import_module(module)
    for module in _PRELOADED_IF_INSTALLED:
        with contextlib.suppress(ImportError):
            importlib.import_module(module)


def _listen(path: Path) -> socket.socket:
    """Listen at ``path``, replacing a socket left by a server that is gone (the lock says so)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    os.chmod(path, 0o600)
    listener.listen(16)
    listener.setblocking(False)
    return listener


def _source_times() -> dict[str, float]:
    """The modification times of the runtime's own modules as imported: a later change is noticed."""
    times: dict[str, float] = {}
    for name, module in list(sys.modules.items()):
        if name.split(".", 1)[0] not in _WATCHED_PACKAGES:
            continue
        path = getattr(module, "__file__", None)
        if path:
            with contextlib.suppress(OSError):
                times[path] = os.stat(path).st_mtime
    return times


def _sources_changed(known: dict[str, float]) -> bool:
    for path, mtime in known.items():
        try:
            if os.stat(path).st_mtime != mtime:
                return True
        except OSError:
            return True
    return False


def _serve(server: _Server) -> int:
    selector = server.selector
    selector.register(server.listener, selectors.EVENT_READ, "listen")
    selector.register(server.wakeup[0], selectors.EVENT_READ, "wakeup")
    # Announce readiness only now: whoever started us (with stdout on a pipe) may stop waiting.
    print(json.dumps({"ready": True, "pid": os.getpid()}), flush=True)
    while True:
        _reap(server)
        idle = time.monotonic() - server.last_active > server.idle_timeout
        if not server.children and (idle or not server.accepting):
            return 0
        timeout = max(0.05, server.idle_timeout - (time.monotonic() - server.last_active))
        for key, _ in selector.select(timeout=min(timeout, 60.0)):
            if key.data == "listen":
                if _accept(server) == "stale":
                    # No more requests; the running children are still reaped and reported.
                    server.accepting = False
                    selector.unregister(server.listener)
                    _stop_listening(server)
            elif key.data == "wakeup":
                with contextlib.suppress(BlockingIOError):
                    os.read(server.wakeup[0], 4096)
            else:
                # A client's connection became readable: it hung up (it sends nothing after its
                # request). Its runtime runs on; only its exit status has no one to go to.
                conn = key.fileobj
                assert isinstance(conn, socket.socket)
                selector.unregister(conn)
                pid = key.data
                if pid in server.children:
                    server.children[pid] = None
                conn.close()


def _accept(server: _Server) -> str:
    try:
        conn, _ = server.listener.accept()
    except (BlockingIOError, InterruptedError):
        return "none"
    server.last_active = time.monotonic()
    try:
        check_peer(peer_uid(conn))
        conn.settimeout(REQUEST_TIMEOUT_S)
        request, fds = _read_request(conn)
    except (PeerRefused, OSError, ValueError, TypeError) as exc:
        with contextlib.suppress(OSError):
            conn.sendall(encode_frame({"refused": str(exc)}))
        conn.close()
        return "refused"
    try:
        if _sources_changed(server.sources):
            conn.sendall(encode_frame({"refused": "the runtime's source changed", "restart": True}))
            return "stale"
        if threading.active_count() != 1:
            conn.sendall(encode_frame({"refused": "the server is not single-threaded"}))
            return "refused"
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(server, conn, request, fds)
        server.children[pid] = conn
        conn.sendall(encode_frame({"pid": pid}))
        conn.setblocking(False)
        server.selector.register(conn, selectors.EVENT_READ, pid)
        return "forked"
    except OSError:
        conn.close()
        return "refused"
    finally:
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)


def _read_request(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    data, fds, _flags, _addr = socket.recv_fds(conn, 64 * 1024, 3)
    try:
        while len(data) < FRAME_HEADER.size:
            more = conn.recv(64 * 1024)
            if not more:
                raise ValueError("the client hung up before its request")
            data += more
        length = decode_frame_length(data[: FRAME_HEADER.size])
        while len(data) < FRAME_HEADER.size + length:
            more = conn.recv(64 * 1024)
            if not more:
                raise ValueError("the client hung up during its request")
            data += more
        request = json.loads(data[FRAME_HEADER.size : FRAME_HEADER.size + length])
        if len(fds) != 3:
            raise ValueError("a request carries three descriptors: stdin, stdout, stderr")
        argv, env, cwd = request.get("argv"), request.get("env"), request.get("cwd")
        if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
            raise ValueError("argv is a list of strings")
        if not isinstance(env, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in env.items()
        ):
            raise ValueError("env maps strings to strings")
        if cwd is not None and not isinstance(cwd, str):
            raise ValueError("cwd is a string")
    except BaseException:
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        raise
    return request, fds


def _reap(server: _Server) -> None:
    while server.children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            server.children.clear()
            return
        if pid == 0:
            return
        server.last_active = time.monotonic()
        conn = server.children.pop(pid, None)
        if conn is None:
            continue
        with contextlib.suppress(OSError, KeyError, ValueError):
            server.selector.unregister(conn)
        with contextlib.suppress(OSError):
            conn.setblocking(True)
            conn.settimeout(REQUEST_TIMEOUT_S)
            conn.sendall(encode_frame({"exit": os.waitstatus_to_exitcode(status)}))
        conn.close()


def _child(server: _Server, conn: socket.socket, request: dict[str, Any], fds: list[int]) -> NoReturn:
    status = 1
    try:
        _become_runtime(server, conn, request, fds)
        import agent_runtime.main as runtime_main

        # startupMs counts from now, the start of this runtime, not from the server's imports.
        runtime_main._PROGRAM_STARTED = time.perf_counter()
        status = runtime_main.main(request["argv"])
    except SystemExit as exc:  # argparse's own exit (--help, a usage error)
        status = exc.code if isinstance(exc.code, int) else 1
    except BaseException as exc:
        with contextlib.suppress(Exception):
            print(f"cowork-agent-runtime: {exc!r}", file=sys.stderr)
    finally:
        from contracts.ipc.eventloop import exit_now

        exit_now(status)


def _become_runtime(server: _Server, conn: socket.socket, request: dict[str, Any], fds: list[int]) -> None:
    os.setsid()
    signal.set_wakeup_fd(-1)
    for number in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(number, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    # What the server's Python objects hold is closed through them, so none of them closes a number
    # reused by the runtime when it is collected.
    server.selector.close()
    server.listener.close()
    for other in server.children.values():
        if other is not None:
            other.close()
    conn.close()
    for end in server.wakeup:
        os.close(end)
    os.close(server.lock)
    for target, fd in enumerate(fds):
        os.dup2(fd, target, inheritable=True)
    _close_all_from(3)
    os.environ.clear()
    os.environ.update(request["env"])
    cwd = request.get("cwd")
    if cwd is not None:
        os.chdir(cwd)
    sys.argv = [sys.argv[0], *request["argv"]]


def _close_all_from(lowest: int) -> None:
    """Every descriptor from ``lowest`` up closed: nothing of the server's reaches the runtime."""
    try:
        names = os.listdir("/proc/self/fd" if os.path.isdir("/proc/self/fd") else "/dev/fd")
    except OSError:
        os.closerange(lowest, os.sysconf("SC_OPEN_MAX"))
        return
    for name in names:
        fd = int(name)
        if fd >= lowest:
            try:
                os.close(fd)
            except OSError as exc:
                if exc.errno != errno.EBADF:
                    raise
