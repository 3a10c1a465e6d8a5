"""One agent-runtime process per open conversation (seed 000 §1), started with ``QProcess`` and
connected back over the desktop's local socket (:class:`desktop.ipc.RuntimeServer`).

* The command and environment come from :mod:`desktop.launch.runtime` on every launch — the runtime
  from source in development, the updater's active installation when installed — with the one-time
  secret of the socket added to the environment, never to the command line.
* Its output (JSON log lines) goes straight to a log file in the logs folder: nothing has to read a
  pipe, so a chatty runtime can never stall on a full one.
* It runs in a session of its own on Unix (a terminal's Ctrl-C reaches only the desktop, which then
  shuts it down in order) and inherits no other file descriptor of the desktop.
* No orphans: the runtime exits when its connection drops (``agent_runtime.main``), which the
  operating system does for us when the desktop dies, however it dies; on a normal close the desktop
  sends ``Shutdown``, waits for the exit, and kills a runtime that does not go.
* If it goes away on its own, ``on_lost(why)`` is called once, with its exit status and last log line.
* A ``watch`` is told of every runtime about to start and of how each ended — crashed, or ended by the
  app — which the updater's crash-loop detection needs (``desktop.updater.crashloop``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from PySide6.QtCore import QIODeviceBase, QObject, QProcess, QProcessEnvironment, QTimer

from contracts.ipc.client_core import ConnectionClosed, RpcCallError
from contracts.methods import SESSION_EVENT
from desktop.i18n import translate
from desktop.ipc import QtJsonRpcClient, RuntimeServer
from desktop.launch.errors import LaunchError
from desktop.launch.gateway import gateway_of

__all__ = ["KEEP_LOGS", "QtRuntimeLauncher", "RunWatch", "RuntimeProcess"]

logger = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 30.0
SHUTDOWN_TIMEOUT_S = 30.0
EXIT_TIMEOUT_S = 10.0
KEEP_LOGS = 40
"""Runtime log files kept in the logs folder (one per runtime started), newest first."""
_DROPPED_CONNECTION_GRACE_MS = 3000

RunWatch = Callable[[list[str]], Awaitable[Callable[[bool], Awaitable[None]] | None]]
"""Awaited with a runtime's command just before it is started; returns what to await with
``crashed`` once that runtime has ended (or None: not watched)."""


class RuntimeProcess(QObject):
    """A runtime process and its JSON-RPC connection (a ``RuntimeConnection`` of
    :mod:`desktop.conversation.session`)."""

    def __init__(
        self,
        command: list[str],
        environment: Mapping[str, str],
        *,
        cwd: str | None,
        log_path: Path,
        on_event: Callable[[dict[str, Any]], None],
        on_lost: Callable[[str], None],
        on_exit: Callable[[bool], None] | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._command = command
        self._environment = dict(environment)
        self._cwd = cwd
        self.log_path = log_path
        self._on_event = on_event
        self._on_lost = on_lost
        self._on_exit = on_exit
        self._server: RuntimeServer | None = None
        self._client: QtJsonRpcClient | None = None
        self._process = QProcess(self)
        self._exited: asyncio.Future[tuple[int, str]] = asyncio.get_running_loop().create_future()
        self._stopping = False
        self._reported = False
        self._asked_to_end = False
        """The app stopped or killed it (not: it failed to connect in time, or died on its own)."""
        self._exit_reported = False
        self._dropped = QTimer(self)
        self._dropped.setSingleShot(True)
        self._dropped.timeout.connect(self._kill_if_running)

    # ------------------------------------------------------------------ reading

    @property
    def pid(self) -> int | None:
        pid = self._process.processId()
        return int(pid) if pid > 0 else None

    @property
    def gateway(self) -> dict[str, str]:
        """The ``LLM_GATEWAY_*`` settings it was started with (it reads them once, at start)."""
        return gateway_of(self._environment)

    @property
    def running(self) -> bool:
        return self._process.state() != QProcess.ProcessState.NotRunning

    @property
    def client(self) -> QtJsonRpcClient | None:
        return self._client

    # ------------------------------------------------------------------ starting

    async def start(self, timeout: float = CONNECT_TIMEOUT_S) -> None:
        """Spawn the runtime and wait until it has connected and proved the secret."""
        server = RuntimeServer(self)
        self._server = server
        env = QProcessEnvironment()
        for key, value in {**self._environment, **server.child_environment()}.items():
            env.insert(key, value)
        process = self._process
        process.setProcessEnvironment(env)
        process.setProgram(self._command[0])
        process.setArguments([*self._command[1:], "--connect", server.full_name])
        if self._cwd:
            process.setWorkingDirectory(self._cwd)
        process.setStandardInputFile(QProcess.nullDevice())
        process.setProcessChannelMode(QProcess.ProcessChannelMode.MergedChannels)
        process.setStandardOutputFile(str(self.log_path), QIODeviceBase.OpenModeFlag.Append)
        if sys.platform != "win32":
            flags = QProcess.UnixProcessFlag
            process.setUnixProcessParameters(
                flags.CreateNewSession | flags.CloseFileDescriptors | flags.ResetSignalHandlers
            )
        process.finished.connect(self._on_finished)
        process.errorOccurred.connect(self._on_error)
        process.start()
        accepting = asyncio.ensure_future(server.accept(timeout=timeout))
        exited: asyncio.Future[Any] = asyncio.shield(self._exited)
        try:
            await asyncio.wait([accepting, exited], return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            accepting.cancel()
            self._stopping = self._asked_to_end = True
            self._kill_if_running()
            raise
        if not accepting.done():
            accepting.cancel()
            with contextlib.suppress(BaseException):
                await accepting
            _, why = self._exited.result()
            started = translate("Startup", "The agent runtime did not start ({reason}).").format(reason=why)
            raise LaunchError(f"{started} {self._last_line()}".strip())
        try:
            client = accepting.result()
        except (TimeoutError, ConnectionClosed) as exc:
            self._stopping = True
            self._kill_if_running()
            late = translate("Startup", "The agent runtime did not connect within {seconds} s.").format(
                seconds=f"{timeout:g}"
            )
            raise LaunchError(f"{late} {self._last_line()}".strip()) from exc
        self._client = client
        client.notification.connect(self._on_notification)
        client.disconnected.connect(self._on_disconnected)

    # ------------------------------------------------------------------ calling

    async def call(self, method: str, params: Any = None, *, timeout: float = 30.0) -> Any:
        if self._client is None:
            raise ConnectionClosed("the agent runtime is not connected")
        return await self._client.call(method, params, timeout=timeout)

    def _on_notification(self, method: str, params: object) -> None:
        if method == SESSION_EVENT and isinstance(params, dict):
            self._on_event(params)

    # ------------------------------------------------------------------ stopping

    async def stop(self, *, shutdown: bool, shutdown_timeout: float = SHUTDOWN_TIMEOUT_S) -> bool:
        """``Shutdown`` when asked (answered within ``shutdown_timeout``), then the process's end —
        waited for, forced if need be. True when the runtime answered ``Shutdown``."""
        self._stopping = self._asked_to_end = True
        client = self._client
        ended = False
        if shutdown and client is not None and not client.closed:
            with contextlib.suppress(RpcCallError, ConnectionClosed, TimeoutError):
                await client.call("Shutdown", {}, timeout=shutdown_timeout)
                ended = True
        if client is not None:
            client.shut("the desktop closed the conversation")
        if self.running:
            try:
                async with asyncio.timeout(EXIT_TIMEOUT_S):
                    await asyncio.shield(self._exited)
            except TimeoutError:
                logger.warning("the runtime %s did not exit; killing it", self.pid)
                self._process.kill()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(EXIT_TIMEOUT_S):
                        await asyncio.shield(self._exited)
        if self._server is not None:
            self._server.close()
        return ended

    def kill(self) -> None:
        """End the process at once (the window is going away and cannot wait)."""
        self._stopping = self._asked_to_end = True
        self._kill_if_running()

    def _kill_if_running(self) -> None:
        if self.running:
            self._process.kill()

    # ------------------------------------------------------------------ it went away

    def _on_disconnected(self, reason: str) -> None:
        if not self._stopping and self.running:
            # The runtime exits when its connection ends; one that lingers is made to.
            self._dropped.start(_DROPPED_CONNECTION_GRACE_MS)

    def _on_error(self, error: QProcess.ProcessError) -> None:
        if error == QProcess.ProcessError.FailedToStart and not self._exited.done():
            self._exited.set_result((-1, f"it could not be run: {self._process.errorString()}"))
            self._report_exit()

    def _on_finished(self, code: int, status: QProcess.ExitStatus) -> None:
        crashed = status == QProcess.ExitStatus.CrashExit
        why = "it was killed or crashed" if crashed else f"it exited with status {code}"
        if not self._exited.done():
            self._exited.set_result((code, why))
        self._report_exit()
        self._dropped.stop()
        if self._client is not None:
            self._client.shut(f"the agent runtime {why[3:]}")
        if self._stopping or self._client is None or self._reported:
            return
        self._reported = True
        last = self._last_line()
        self._on_lost(f"{why}{'; ' + last if last else ''}")

    def _report_exit(self) -> None:
        if self._on_exit is not None and not self._exit_reported:
            self._exit_reported = True
            self._on_exit(not self._asked_to_end)

    def _last_line(self) -> str:
        """The runtime's last log message, for the user: what it said before it went."""
        try:
            with self.log_path.open("rb") as log:
                log.seek(0, os.SEEK_END)
                size = log.tell()
                log.seek(max(0, size - 4096))
                lines = log.read().decode(errors="replace").strip().splitlines()
        except OSError:
            return ""
        if not lines:
            return ""
        line = lines[-1]
        with contextlib.suppress(ValueError, AttributeError):
            line = str(json.loads(line).get("message") or line)
        return line[:300]


class QtRuntimeLauncher:
    """Starts runtimes for the conversations (:class:`desktop.conversation.session.RuntimeLauncher`).

    ``command()`` and ``environment()`` are asked on every launch, so a runtime the updater installed
    or settings the user changed apply from the next runtime on; a conversation whose runtime runs on
    older gateway settings restarts it before its next task or resume (``gateway()`` tells).
    """

    def __init__(
        self,
        *,
        command: Callable[[], list[str]],
        environment: Callable[[], Awaitable[Mapping[str, str]]],
        log_dir: Path,
        watch: RunWatch | None = None,
        parent: QObject | None = None,
    ) -> None:
        self._command = command
        self._environment = environment
        self._log_dir = log_dir
        self._watch = watch
        self._parent = parent
        self._numbers = itertools.count(1)
        self._exit_reports: set[asyncio.Task[None]] = set()
        self.processes: list[RuntimeProcess] = []

    async def launch(
        self,
        *,
        cwd: str | None,
        on_event: Callable[[dict[str, Any]], None],
        on_lost: Callable[[str], None],
    ) -> RuntimeProcess:
        self._log_dir.mkdir(parents=True, exist_ok=True)
        self._prune_logs()
        stamp = time.strftime("%Y%m%d-%H%M%S")
        log_path = self._log_dir / f"runtime-{stamp}-{os.getpid()}-{next(self._numbers)}.log"
        environment = await self._environment()
        if self._exit_reports:
            # How the last runtimes ended decides which runtime this one is (a crash loop rolls back).
            await asyncio.wait(set(self._exit_reports))
        command = self._command()
        ended = await self._watch(command) if self._watch is not None else None
        process = RuntimeProcess(
            command,
            environment,
            cwd=cwd,
            log_path=log_path,
            on_event=on_event,
            on_lost=on_lost,
            on_exit=None if ended is None else self._exit_reporter(ended),
            parent=self._parent,
        )
        self.processes = [p for p in self.processes if p.running]
        self.processes.append(process)
        await process.start()
        return process

    async def gateway(self) -> dict[str, str]:
        """The ``LLM_GATEWAY_*`` settings a runtime started now would get (Settings may have changed)."""
        return gateway_of(await self._environment())

    async def settled(self) -> None:
        """Wait until every ended runtime has been reported to the watch."""
        while self._exit_reports:
            await asyncio.wait(set(self._exit_reports))

    def _exit_reporter(self, ended: Callable[[bool], Awaitable[None]]) -> Callable[[bool], None]:
        async def report(crashed: bool) -> None:
            try:
                await ended(crashed)
            except Exception:  # a report that fails must not take the window with it
                logger.exception("could not report how a runtime ended")

        def exited(crashed: bool) -> None:
            task = asyncio.ensure_future(report(crashed))
            self._exit_reports.add(task)
            task.add_done_callback(self._exit_reports.discard)

        return exited

    def kill_all(self) -> None:
        """The last resort at exit: whatever still runs is ended now."""
        for process in self.processes:
            process.kill()

    def _prune_logs(self) -> None:
        try:
            logs = sorted(self._log_dir.glob("runtime-*.log"), key=lambda p: p.stat().st_mtime, reverse=True)
            for old in logs[KEEP_LOGS:]:
                old.unlink(missing_ok=True)
        except OSError as exc:
            logger.info("could not prune old runtime logs: %s", exc)
