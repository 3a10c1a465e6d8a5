"""The updater for the desktop window: scheduled rounds off the GUI thread, progress and results as signals.

Usage (the window owns one)::

    updater = RuntimeUpdater(UpdateService(manifest_url), parent=window)
    updater.stageChanged.connect(...)      # "checking", "downloading", …, "idle"
    updater.progressChanged.connect(...)   # bytes done, bytes total (while downloading)
    updater.progressed.connect(...)        # the UpdateProgress itself (stage, bytes, version)
    updater.finished.connect(...)          # an UpdateResult: show result.message if it matters
    updater.start()                        # a round shortly after launch, then every interval

Each round runs ``UpdateService.update`` on a worker thread with its own event loop: hashing,
unpacking and the health check never touch the GUI thread (docs/architecture/index.md, "Conventions":
no blocking call on the Qt thread). Signals cross back to the GUI thread queued. A new runtime is
used from the next session on; running sessions are never interrupted.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Awaitable, Callable

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from desktop.updater.service import UpdateProgress, UpdateResult, UpdateService, UpdateStage

__all__ = ["RuntimeUpdater"]

logger = logging.getLogger(__name__)

_PROGRESS_INTERVAL_S = 0.1


class RuntimeUpdater(QObject):
    stageChanged = Signal(str)
    progressChanged = Signal(object, object)  # Python ints: a bundle may pass 2 GiB
    progressed = Signal(object)  # UpdateProgress: on each new stage, and as often as progressChanged
    finished = Signal(object)
    _roundOver = Signal(object)

    def __init__(
        self,
        service: UpdateService,
        *,
        interval_hours: float = 6.0,
        first_delay_seconds: float = 15.0,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.service = service
        self.last_result: UpdateResult | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[object] | None = None
        self._first = QTimer(self, singleShot=True, interval=int(first_delay_seconds * 1000))
        self._periodic = QTimer(self, interval=int(interval_hours * 3_600_000))
        self._first.timeout.connect(self.check_now)
        self._periodic.timeout.connect(self.check_now)
        self._roundOver.connect(self._over)

    @property
    def running(self) -> bool:
        return self._thread is not None

    def start(self) -> None:
        """Check shortly after launch, then every interval."""
        self._first.start()
        self._periodic.start()

    @Slot()
    def check_now(self) -> bool:
        """Start a round now, unless one is running; returns whether one started."""
        return self._start(self.service.update)

    def install_compatible(self, supported: str) -> bool:
        """Start a round that installs the runtime the backend accepts (``supported``, its PEP 440
        range: ``UpdateService.install_compatible``), unless a round is running; whether one started.
        Its result comes with :attr:`finished` like any round's."""
        return self._start(lambda report: self.service.install_compatible(supported, report))

    def _start(self, round_of: Callable[[Callable[[UpdateProgress], None]], Awaitable[UpdateResult]]) -> bool:
        if self._thread is not None:
            return False
        self.stageChanged.emit("checking")
        self.progressed.emit(UpdateProgress(UpdateStage.CHECKING))
        self._thread = threading.Thread(
            target=self._work, args=(round_of,), name="runtime-update", daemon=True
        )
        self._thread.start()
        return True

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the schedule and cancel a round in flight (a download resumes next time)."""
        self._first.stop()
        self._periodic.stop()
        loop, task, thread = self._loop, self._task, self._thread
        if loop is not None and task is not None:
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(task.cancel)
        if thread is not None:
            thread.join(timeout)

    async def wait_stopped(self, timeout: float = 10.0) -> None:
        """:meth:`stop`, then wait for the round in flight to end without blocking the event loop (an
        unpack or a health check cannot be interrupted; one cut short by the app's exit is cleaned
        up by the next round)."""
        self.stop(timeout=0)
        thread = self._thread
        if thread is not None:
            await asyncio.to_thread(thread.join, timeout)

    # ------------------------------------------------------------------ the worker thread

    def _work(self, round_of: Callable[[Callable[[UpdateProgress], None]], Awaitable[UpdateResult]]) -> None:
        last_stage = ""
        last_emit = 0.0

        def report(progress: UpdateProgress) -> None:
            nonlocal last_stage, last_emit
            now = time.monotonic()
            new_stage = progress.stage.value != last_stage
            if new_stage:
                last_stage = progress.stage.value
                self.stageChanged.emit(last_stage)
            # At most ten a second: a 500 MB download makes thousands of chunks.
            counted = bool(progress.total) and (
                now - last_emit >= _PROGRESS_INTERVAL_S or progress.done == progress.total
            )
            if counted:
                last_emit = now
                self.progressChanged.emit(progress.done, progress.total)
            if new_stage or counted:
                self.progressed.emit(progress)

        async def round_() -> UpdateResult:
            self._loop = asyncio.get_running_loop()
            self._task = asyncio.current_task()
            return await round_of(report)

        result: UpdateResult | None = None
        try:
            result = asyncio.run(round_())
        except asyncio.CancelledError:
            logger.info("runtime update cancelled")
        except Exception:
            logger.exception("runtime update crashed")
        finally:
            self._loop = self._task = None
            self._roundOver.emit(result)

    @Slot(object)
    def _over(self, result: UpdateResult | None) -> None:
        if self._thread is not None:
            self._thread.join()
        self._thread = None
        # The result first: "idle" then means the round is over either way, answered or not.
        if result is not None:
            self.last_result = result
            self.finished.emit(result)
        self.stageChanged.emit("idle")
