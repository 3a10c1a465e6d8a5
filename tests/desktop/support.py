"""Helpers for the desktop tests: a qasync loop per test, the test peer as a real process, signal
recorders and an in-process fake runtime for byte-exact misbehaviour.

The tests are plain (not ``asyncio``-marked) functions that run one scenario coroutine on a fresh
``qasync.QEventLoop`` through ``asyncio.Runner``: pytest-asyncio only manages loops for async tests,
so it never sees this one, and the runner cancels leftovers and closes the loop after every test.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Coroutine, Iterator
from typing import Any, TypeVar

import qasync
from PySide6.QtCore import SignalInstance
from PySide6.QtNetwork import QLocalSocket
from PySide6.QtWidgets import QApplication

from contracts.ipc.handshake import SECRET_ENV, hello_frame, verify_welcome
from tests.support.peers import REPO_ROOT

T = TypeVar("T")
Run = Callable[[Coroutine[Any, Any, T]], T]


LEFTOVER_TASKS_S = 10.0
"""How long a test's leftover tasks get to end once cancelled before the loop is closed anyway."""


@contextlib.contextmanager
def qasync_runner(app: QApplication) -> Iterator[Run[Any]]:
    # Not asyncio.Runner: its close waits without a limit for every leftover task to end once
    # cancelled, and a task that never did (seen in CI, rarely: Qt busy inside exec() while the wait
    # went on) hung the whole desktop suite. Here the wait is bounded and the stragglers are named.
    loop = qasync.QEventLoop(app)

    def run(coroutine: Coroutine[Any, Any, T]) -> T:
        result: T = loop.run_until_complete(loop.create_task(coroutine))
        return result

    try:
        yield run
    finally:
        try:
            _end_leftover_tasks(loop)
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            loop.close()
    # The closed loop and whatever else the test left in reference cycles are destroyed now, on the
    # main thread. Left to the garbage collector, they would be destroyed by whichever thread next
    # allocates enough (a release server, the updater's worker, a scripted gateway): a QObject
    # destroyed off its thread leaves its timers registered, and the next one to fire crashes the
    # interpreter (qasync's timer object of a closed loop did, at random tests).
    gc.collect()


def _end_leftover_tasks(loop: asyncio.AbstractEventLoop) -> None:
    leftovers = [task for task in asyncio.all_tasks(loop) if not task.done()]
    if not leftovers:
        return
    for task in leftovers:
        task.cancel()
    ended, stuck = loop.run_until_complete(asyncio.wait(leftovers, timeout=LEFTOVER_TASKS_S))
    for task in ended:
        if not task.cancelled() and task.exception() is not None:
            loop.call_exception_handler(
                {
                    "message": "a leftover task failed as the test ended",
                    "exception": task.exception(),
                    "task": task,
                }
            )
    if stuck:
        print(f"{len(stuck)} task(s) did not end once cancelled: {stuck!r}", file=sys.stderr)


class Peer:
    """``tests.support.rpc_peer --connect NAME`` in its own process; its stderr kept for failures."""

    def __init__(self, name: str, secret: str) -> None:
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (outlives this call; closed in stop())
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.support.rpc_peer", "--connect", name],
            cwd=REPO_ROOT,
            env={**os.environ, SECRET_ENV: secret},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._stderr,
        )

    async def exited(self, timeout: float = 15.0) -> int:
        """The exit status, waited for off the event loop's thread."""
        return await asyncio.to_thread(self.process.wait, timeout)

    def kill(self) -> None:
        self.process.kill()  # SIGKILL on Unix: no chance to say goodbye

    def stderr(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)
        self._stderr.close()


class Peers:
    """Starts peers and makes sure none outlives its test."""

    def __init__(self) -> None:
        self._peers: list[Peer] = []

    def spawn(self, name: str, secret: str) -> Peer:
        peer = Peer(name, secret)
        self._peers.append(peer)
        return peer

    def stop_all(self) -> None:
        for peer in self._peers:
            peer.stop()


class Recorder:
    """Records a signal's emissions; ``await wait(n)`` until there are at least ``n`` of them."""

    def __init__(self, signal: SignalInstance) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self._waiter: tuple[int, asyncio.Future[None]] | None = None
        signal.connect(self._record)

    def _record(self, *args: Any) -> None:
        self.calls.append(args)
        if self._waiter is not None and len(self.calls) >= self._waiter[0] and not self._waiter[1].done():
            self._waiter[1].set_result(None)

    async def wait(self, count: int = 1, timeout: float = 10.0) -> list[tuple[Any, ...]]:
        if len(self.calls) < count:
            future = asyncio.get_running_loop().create_future()
            self._waiter = (count, future)
            try:
                async with asyncio.timeout(timeout):
                    await future
            finally:
                self._waiter = None
        return self.calls


async def signalled(signal: SignalInstance, timeout: float = 10.0) -> tuple[Any, ...]:
    """The arguments of the next emission of ``signal``."""
    future: asyncio.Future[tuple[Any, ...]] = asyncio.get_running_loop().create_future()

    def fire(*args: Any) -> None:
        if not future.done():
            future.set_result(args)

    connection = signal.connect(fire)
    try:
        async with asyncio.timeout(timeout):
            return await future
    finally:
        signal.disconnect(connection)


class RawSocket:
    """An in-process local-socket peer that says exactly the bytes a test wants."""

    def __init__(self) -> None:
        self.socket = QLocalSocket()
        self.gone = Recorder(self.socket.disconnected)
        self.received = b""
        self._arrived: asyncio.Future[None] | None = None
        self.socket.readyRead.connect(self._read)

    def _read(self) -> None:
        self.received += bytes(self.socket.readAll().data())
        if self._arrived is not None and not self._arrived.done():
            self._arrived.set_result(None)

    async def read_until(self, marker: bytes, timeout: float = 5.0) -> None:
        """Returns once ``marker`` is among the bytes received."""
        async with asyncio.timeout(timeout):
            while marker not in self.received:
                self._arrived = asyncio.get_running_loop().create_future()
                await self._arrived

    async def connect(self, name: str, timeout: float = 5.0) -> None:
        connected = Recorder(self.socket.connected)
        self.socket.connectToServer(name)
        await connected.wait(1, timeout)

    def send(self, data: bytes) -> None:
        self.socket.write(data)
        self.socket.flush()

    async def cut(self, timeout: float = 5.0) -> None:
        """Returns once the other end has closed this connection."""
        await self.gone.wait(1, timeout)

    async def authenticate(self, secret: str, then: bytes = b"", timeout: float = 5.0) -> None:
        """Play the runtime's side of the handshake; ``then`` goes in the same write as the hello."""
        frame, nonce = hello_frame(secret)
        self.send(frame + then)
        await self.read_until(b"\n", timeout)
        welcome, _, self.received = self.received.partition(b"\n")
        verify_welcome(secret, nonce, welcome)

    def close(self) -> None:
        self.socket.abort()
