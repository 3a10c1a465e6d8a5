"""Crash-loop detection for newly activated runtimes, called by the desktop's process manager.

A runtime that passed its health check can still crash on real work. The process manager reports
every runtime it starts and how each ended::

    run = guard.record_start(active.version)          # right after spawning it
    rollback = guard.record_exit(run, crashed=True)   # it died unasked (non-zero exit, signal, lost pipe)

A version is *on probation* from its activation until one of its runs ends cleanly or outlives
``quick_seconds``. While on probation, ``max_quick_crashes`` crashes each within ``quick_seconds`` of
their start roll it back: the pointer returns to the previous version (or the bundled runtime) and
the version is marked bad, never to be started or installed again. The count is kept in
``updater/runs.json``, so it spans app restarts — a runtime that crashes at once usually makes the
user restart the app. A version that has proven itself is never rolled back for crashing: by then the
cause is more likely the task than the release.

Starts whose exit was never reported (the app itself died) are remembered for a week, so garbage
collection never deletes a version a session might still be running.

:class:`CrashLoopWatch` is the guard as the window's process manager uses it: only runtimes started
from the active *installed* version are reported (not the bundled runtime, not a runtime from source
or from ``COWORK_RUNTIME_EXECUTABLE``), and every report is written off the event loop's thread.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop.updater.install import Installer, Rollback
from desktop.updater.layout import InstallLayout, atomic_write, default_root, read_json
from desktop.updater.state import state_lock

__all__ = ["CrashLoopGuard", "CrashLoopWatch", "RunEnded", "RuntimeRun"]

logger = logging.getLogger(__name__)

_MAX_OPEN_STARTS = 64
_OPEN_START_MEMORY_SECONDS = 7 * 86400.0


@dataclass(frozen=True, slots=True)
class RuntimeRun:
    """One runtime process, as :meth:`CrashLoopGuard.record_start` saw it start."""

    version: str
    started_at: float


class CrashLoopGuard:
    def __init__(
        self,
        root: Path | None = None,
        *,
        bundled_dir: Path | None = None,
        max_quick_crashes: int = 3,
        quick_seconds: float = 60.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.layout = InstallLayout(default_root() if root is None else root)
        self.installer = Installer(self.layout, bundled_dir=bundled_dir)
        self.max_quick_crashes = max_quick_crashes
        self.quick_seconds = quick_seconds
        self.clock = clock

    def record_start(self, version: str) -> RuntimeRun:
        run = RuntimeRun(version, self.clock())

        def add(entry: dict[str, Any]) -> None:
            entry["starts"] = [*entry["starts"], run.started_at][-_MAX_OPEN_STARTS:]

        self._change(version, add)
        return run

    def record_exit(self, run: RuntimeRun, *, crashed: bool) -> Rollback | None:
        """Report how ``run`` ended; returns the rollback it caused, if any."""
        quick = crashed and self.clock() - run.started_at < self.quick_seconds

        def settle(entry: dict[str, Any]) -> bool:
            entry["starts"] = [start for start in entry["starts"] if start != run.started_at]
            if entry["proven"]:
                return False
            if not quick:
                entry["proven"], entry["quickCrashes"] = True, 0
                return False
            entry["quickCrashes"] += 1
            return bool(entry["quickCrashes"] >= self.max_quick_crashes)

        with state_lock(self.layout):
            if not self._change(run.version, settle):
                return None
            return self.installer.rollback(
                run.version,
                f"crashed {self.max_quick_crashes} times within {self.quick_seconds:g} s of starting",
            )

    def record_activation(self, version: str) -> None:
        """A fresh activation starts a fresh probation (the updater calls this)."""

        def reset(entry: dict[str, Any]) -> None:
            entry["proven"], entry["quickCrashes"] = False, 0

        self._change(version, reset)

    def possibly_running(self) -> set[str]:
        """Versions with a start whose exit was not reported in the last week."""
        horizon = self.clock() - _OPEN_START_MEMORY_SECONDS
        return {
            version
            for version, entry in self._load().items()
            if any(start > horizon for start in entry["starts"])
        }

    # ------------------------------------------------------------------ runs.json

    def _load(self) -> dict[str, dict[str, Any]]:
        data = read_json(self.layout.runs_file)
        versions = data.get("versions") if isinstance(data, dict) else None
        if not isinstance(versions, dict):
            return {}
        return {str(version): _entry(value) for version, value in versions.items()}

    def _change(self, version: str, change: Callable[[dict[str, Any]], Any]) -> Any:
        with state_lock(self.layout):
            versions = self._load()
            entry = versions.setdefault(version, _entry(None))
            result = change(entry)
            document = {"versions": versions}
            atomic_write(
                self.layout.runs_file, json.dumps(document, indent=2, sort_keys=True).encode() + b"\n"
            )
        return result


RunEnded = Callable[[bool], Awaitable[None]]
"""Told how a watched runtime ended: ``crashed`` when it went away without the app asking."""


class CrashLoopWatch:
    """Reports the runs of the active installed version to a :class:`CrashLoopGuard`.

    ``await watch.started(command)`` just before a runtime is spawned returns what to await with
    ``crashed`` once it has ended, or None when ``command`` is not the active installed version's
    program. A rollback it causes is passed to ``on_rollback`` (on the caller's thread); from then on
    the active runtime — and so the next runtime started — is the previous version.
    """

    def __init__(
        self, guard: CrashLoopGuard, *, on_rollback: Callable[[Rollback], None] | None = None
    ) -> None:
        self.guard = guard
        self.on_rollback = on_rollback

    async def started(self, command: Sequence[str]) -> RunEnded | None:
        # Each report is a locked, fsynced write: never on the GUI thread. What runs on the worker
        # thread references the guard only — never ``on_rollback``, which may hold a window: the last
        # reference to a Qt object dropped on a worker thread destroys it there.
        try:
            run = await asyncio.to_thread(_record_start, self.guard, list(command))
        except OSError as exc:
            logger.warning("could not note a runtime start for crash-loop detection: %s", exc)
            return None
        if run is None:
            return None

        async def ended(crashed: bool) -> None:
            try:
                rollback = await asyncio.to_thread(self.guard.record_exit, run, crashed=crashed)
            except OSError as exc:
                logger.warning("could not note how runtime %s ended: %s", run.version, exc)
                return
            if rollback is not None and self.on_rollback is not None:
                self.on_rollback(rollback)

        return ended


def _record_start(guard: CrashLoopGuard, command: list[str]) -> RuntimeRun | None:
    # Asked again rather than passed in: if an update or a rollback switched the pointer since the
    # command was chosen, the command no longer matches and the run is not counted against a version
    # it does not run.
    active = guard.installer.active()
    if active is None or active.source != "installed" or command != active.command():
        return None
    return guard.record_start(active.version)


def _entry(value: object) -> dict[str, Any]:
    """A runs.json entry with every field present and of the right type (a damaged one starts over)."""
    entry = value if isinstance(value, dict) else {}
    starts = entry.get("starts")
    crashes = entry.get("quickCrashes")
    return {
        "starts": [s for s in starts if isinstance(s, int | float)] if isinstance(starts, list) else [],
        "quickCrashes": crashes if isinstance(crashes, int) and crashes >= 0 else 0,
        "proven": entry.get("proven") is True,
    }
