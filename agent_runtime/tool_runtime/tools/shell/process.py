"""Starting a command's process, pumping its output, and killing its whole tree (seed 003 §6.2).

The process is a plain ``Popen`` rather than asyncio's subprocess transports: the Windows proactor
cannot read pipes from a ``Popen`` started with a verbatim ``cmd.exe`` command line, which cmd's
quoting rules require. On POSIX the event loop watches its pipes (and, on Linux, a pidfd for its exit)
itself: no thread to hand each command to and back from — a reused thread's wake-up and the loop's
wake-up from it cost about 0.9 ms of a ``true`` that takes 0.7 ms to start and reap (1.6 ms in all).
Windows pipes cannot be polled, so there plain threads read them.

The tree: on POSIX the shell leads a new session and process group, so ``killpg`` reaches everything
that stayed in it; processes that left it (``setsid``, daemons) are found by the run id every
command's environment carries — children inherit it wherever they go, the way CI servers find a
build's strays — and by walking the descendants. On Windows, ``taskkill /T /F`` plus the same sweep.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import IO, TypeVar

import psutil

from agent_runtime.tool_runtime.platform.base import Platform, ShellCommand
from agent_runtime.tool_runtime.tools.shell.capture import StreamCapture

__all__ = [
    "RUN_ID_VARIABLE",
    "SECRET_ENVIRONMENT",
    "OutputPump",
    "ProcessTree",
    "command_environment",
    "in_thread",
    "process_exit",
    "spawn",
]

logger = logging.getLogger(__name__)

#: The runtime's own credentials: never handed to a command, so a prompt-injected command cannot
#: read the LLM gateway token, the backend token or the desktop connection's secret.
SECRET_ENVIRONMENT: tuple[str, ...] = ("COWORK_RPC_SECRET", "LLM_GATEWAY_AUTH_TOKEN", "COWORK_BACKEND_TOKEN")
#: Marks every process a command starts, so that strays which left its process group can be found.
RUN_ID_VARIABLE = "COWORK_TOOL_RUN_ID"

_READ_CHUNK = 256 * 1024
_GONE_POLL_SECONDS = 0.02
_SWEEP_ROUNDS = 5

T = TypeVar("T")


def command_environment(base: Mapping[str, str], run_id: str) -> dict[str, str]:
    """The user's environment (seed 003 §11: inherited) less the runtime's secrets, plus the run id."""
    secrets = {name.upper() for name in SECRET_ENVIRONMENT}
    # Upper-cased comparison: Windows environment names are case-insensitive.
    env = {name: value for name, value in base.items() if name.upper() not in secrets}
    env[RUN_ID_VARIABLE] = run_id
    return env


def spawn(
    shell: ShellCommand, *, cwd: str, env: Mapping[str, str], with_stdin: bool
) -> subprocess.Popen[bytes]:
    """Start the shell on the command: its own process group (POSIX session / Windows group)."""
    stdin = subprocess.PIPE if with_stdin else subprocess.DEVNULL
    args: str | list[str]
    if sys.platform == "win32":
        args = shell.command_line or list(shell.argv)
        flags = subprocess.CREATE_NEW_PROCESS_GROUP | subprocess.CREATE_NO_WINDOW
    else:
        args, flags = list(shell.argv), 0
    return subprocess.Popen(
        args,
        cwd=cwd,
        env=dict(env),
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,
        creationflags=flags,
        start_new_session=sys.platform != "win32",
    )


_Job = Callable[[], Callable[[], None]]
"""A blocking call that never raises; it returns what then reports its outcome."""


class _Workers:
    """Daemon threads that run one blocking call at a time and then wait, idle, for the next one.

    Not the default executor: a command can block a thread for as long as it runs, and a handful of
    long commands must not starve every other ``to_thread`` user; so a call never queues behind a
    busy thread — with none idle, a new one starts. Reusing idle threads keeps ``Thread.start`` off
    the command's path: it blocks until the new thread runs, which on a busy machine costs a
    millisecond or more per thread, two per command. Idle threads end after a while; daemon threads
    never hold up the interpreter's exit behind a command that still runs.
    """

    IDLE_SECONDS = 60.0

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: queue.SimpleQueue[tuple[_Job, str]] = queue.SimpleQueue()
        self._idle = 0

    def run(self, job: _Job, name: str) -> None:
        """Run ``job`` on an idle thread or a new one. The job returns what tells its outcome: that
        runs only once the thread counts as idle again, so the caller's next job finds it idle."""
        with self._lock:
            if self._idle > 0:
                self._idle -= 1  # claimed: that thread takes this job off the queue
                self._jobs.put((job, name))
                return
        threading.Thread(target=self._work, args=(job, name), name=name, daemon=True).start()

    def forget(self) -> None:
        """After ``fork``: the child has none of the parent's threads, idle or not."""
        self._lock = threading.Lock()
        self._jobs = queue.SimpleQueue()
        self._idle = 0

    def _work(self, job: _Job, name: str) -> None:
        next_job: tuple[_Job, str] | None = (job, name)
        while next_job is not None:
            job, name = next_job
            threading.current_thread().name = name
            tell = job()
            with self._lock:
                self._idle += 1
            tell()
            next_job = self._next_job()

    def _next_job(self) -> tuple[_Job, str] | None:
        """The next job for this idle thread, or None once it has been idle long enough to end."""
        while True:
            try:
                return self._jobs.get(timeout=self.IDLE_SECONDS)
            except queue.Empty:
                with self._lock:
                    if self._jobs.empty():
                        self._idle -= 1
                        return None
                # A job was handed over just as the wait ran out: wait again, still counted idle.


_workers = _Workers()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_workers.forget)


def in_thread(loop: asyncio.AbstractEventLoop, function: Callable[[], T], name: str) -> asyncio.Future[T]:
    """Run a blocking call on a thread of its own (an idle one reused); its outcome arrives as a
    future on ``loop``."""
    future: asyncio.Future[T] = loop.create_future()

    def settle(value: T | None, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(value)  # type: ignore[arg-type]

    def target() -> Callable[[], None]:
        try:
            value = function()
        except BaseException as exc:
            return functools.partial(post, None, exc)
        return functools.partial(post, value, None)

    def post(value: T | None, error: BaseException | None) -> None:
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody is waiting
            loop.call_soon_threadsafe(settle, value, error)

    _workers.run(target, name)
    return future


def write_stdin(pipe: IO[bytes], data: bytes) -> None:
    """Feed ``data`` to the command and close its stdin; a command that exits early is no error."""
    fd = pipe.fileno()
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            pipe.close()


def process_exit(loop: asyncio.AbstractEventLoop, process: subprocess.Popen[bytes]) -> asyncio.Future[int]:
    """A future that settles with the process's exit status once it has exited (and been reaped):
    the loop watches a pidfd on Linux; elsewhere a thread waits."""
    pidfd_open = getattr(os, "pidfd_open", None)
    if pidfd_open is None:
        return in_thread(loop, process.wait, "cowork-wait")
    try:
        pidfd = pidfd_open(process.pid)
    except OSError:  # a kernel before 5.3, or a sandbox that refuses the call
        return in_thread(loop, process.wait, "cowork-wait")
    future: asyncio.Future[int] = loop.create_future()

    def exited() -> None:
        loop.remove_reader(pidfd)
        os.close(pidfd)
        if not future.done():
            future.set_result(process.wait())  # it has exited: this only reaps it

    loop.add_reader(pidfd, exited)
    return future


class OutputPump:
    """Reads stdout and stderr into their captures until both end (or ``stop`` is called)."""

    def __init__(self, streams: list[tuple[IO[bytes], StreamCapture]]) -> None:
        self._streams = streams
        self._stop = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._open: dict[int, tuple[IO[bytes], StreamCapture]] = {}
        self._ended: asyncio.Future[None] | None = None

    def start(self, loop: asyncio.AbstractEventLoop) -> asyncio.Future[None]:
        if sys.platform == "win32":
            futures = [
                in_thread(loop, functools.partial(self._read_blocking, pipe, capture), "cowork-output")
                for pipe, capture in self._streams
            ]
            return asyncio.ensure_future(_all(futures))
        self._loop = loop
        self._ended = loop.create_future()
        for pipe, capture in self._streams:
            fd = pipe.fileno()
            os.set_blocking(fd, False)
            self._open[fd] = (pipe, capture)
            loop.add_reader(fd, self._readable, fd)
        return self._ended

    def stop(self) -> None:
        """Stop reading soon, even if some process still holds the pipes open."""
        self._stop.set()
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._close_all)

    def _readable(self, fd: int) -> None:
        capture = self._open[fd][1]
        try:
            chunk = os.read(fd, _READ_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if chunk:
            capture.feed(chunk)
        else:
            self._close(fd)

    def _close(self, fd: int) -> None:
        entry = self._open.pop(fd, None)
        if entry is None:
            return
        pipe, capture = entry
        assert self._loop is not None
        self._loop.remove_reader(fd)
        capture.close()
        with contextlib.suppress(OSError):
            pipe.close()
        if not self._open and self._ended is not None and not self._ended.done():
            self._ended.set_result(None)

    def _close_all(self) -> None:
        for fd in list(self._open):
            self._close(fd)

    def _read_blocking(self, pipe: IO[bytes], capture: StreamCapture) -> None:
        # Windows pipes cannot be polled; a blocking read ends when the last writer is gone.
        try:
            while not self._stop.is_set():
                chunk = os.read(pipe.fileno(), _READ_CHUNK)
                if not chunk:
                    break
                capture.feed(chunk)
        finally:
            capture.close()
            with contextlib.suppress(OSError):
                pipe.close()


async def _all(futures: list[asyncio.Future[None]]) -> None:
    await asyncio.gather(*futures)


def _alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


class ProcessTree:
    """Everything one command started, and how to end it: TERM, a grace period, then KILL."""

    def __init__(self, root: subprocess.Popen[bytes], run_id: str, platform: Platform, grace: float) -> None:
        self.root = root
        self._run_id = run_id
        self._platform = platform
        self._grace = grace

    def members(self) -> list[psutil.Process]:
        """Live processes of the tree other than the root: descendants, and strays with the run id."""
        found: dict[int, psutil.Process] = {}
        with contextlib.suppress(psutil.Error):
            for child in psutil.Process(self.root.pid).children(recursive=True):
                found[child.pid] = child
        own = os.getpid()
        for process in psutil.process_iter():
            if process.pid in found or process.pid in (own, self.root.pid):
                continue
            try:
                if process.environ().get(RUN_ID_VARIABLE) == self._run_id:
                    found[process.pid] = process
            except (psutil.Error, OSError):
                continue  # gone, a zombie, or another user's process: not ours
        return [process for process in found.values() if _alive(process)]

    async def terminate(self) -> None:
        """End the whole tree; returns when nothing of it is left running (or after the last KILL)."""
        members = await asyncio.to_thread(self.members)
        if sys.platform == "win32":
            await asyncio.to_thread(self._taskkill)
        else:
            self._signal_all(members, signal.SIGTERM)
            # A stopped process cannot act on TERM until it runs again.
            self._signal_all(members, signal.SIGCONT)
            await self._wait_gone(members, self._grace)
        await self.kill_remaining()

    async def kill_remaining(self) -> None:
        """KILL everything of the tree still alive, sweeping again for processes forked meanwhile."""
        for _ in range(_SWEEP_ROUNDS):
            members = await asyncio.to_thread(self.members)
            root_alive = self.root.poll() is None
            if not members and not root_alive:
                return
            self._signal_all(members, signal.SIGKILL if hasattr(signal, "SIGKILL") else signal.SIGTERM)
            await self._wait_gone(members, 1.0)
        logger.warning("processes of a command survived %d kill sweeps", _SWEEP_ROUNDS)

    def _signal_all(self, members: list[psutil.Process], sig: int) -> None:
        if sys.platform != "win32":
            # The group first: it reaches members forked after the snapshot, too.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.root.pid, sig)
        if self.root.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
                self.root.send_signal(sig)
        for process in members:
            # psutil refuses to signal a pid that now belongs to another process (start-time check).
            with contextlib.suppress(psutil.Error, OSError):
                process.send_signal(sig)

    async def _wait_gone(self, members: list[psutil.Process], timeout: float) -> None:
        # Processes that are not our children cannot be waited for; poll their state until gone.
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.root.poll() is None or any(_alive(process) for process in members):
                await asyncio.sleep(_GONE_POLL_SECONDS)
                continue
            return

    def _taskkill(self) -> None:
        command = self._platform.kill_tree_command(self.root.pid)
        if command is None:
            return
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run(
                list(command),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=10,
                check=False,
            )
