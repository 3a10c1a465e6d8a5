"""The launcher tells its watch (the updater's crash-loop detection) of every runtime it starts and
whether it crashed: ended by the app is not a crash; exiting at once, failing to run, or dying
unasked is. Real processes."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

import pytest

from desktop.launch.errors import LaunchError
from desktop.supervision.runtime import QtRuntimeLauncher, RunWatch
from tests.desktop.supervision.live import runtime_env
from tests.desktop.support import Run
from tests.support.backend import Backend

RUNTIME = [sys.executable, "-m", "agent_runtime"]


class Watch:
    """Records ("start", command) and ("end", crashed); each report takes a moment, as a fsynced
    write does."""

    def __init__(self) -> None:
        self.events: list[tuple[str, object]] = []
        self._changed = asyncio.Event()

    async def started(self, command: list[str]) -> Callable[[bool], Awaitable[None]]:
        self.events.append(("start", command))

        async def ended(crashed: bool) -> None:
            await asyncio.sleep(0.05)
            self.events.append(("end", crashed))
            self._changed.set()

        return ended

    async def ends(self, count: int) -> None:
        async with asyncio.timeout(15):
            while sum(1 for kind, _ in self.events if kind == "end") < count:
                self._changed.clear()
                await self._changed.wait()


def make_launcher(
    env: Mapping[str, str], tmp_path: Path, commands: list[list[str]], watch: RunWatch
) -> QtRuntimeLauncher:
    async def environment() -> Mapping[str, str]:
        return env

    return QtRuntimeLauncher(
        command=lambda: commands.pop(0), environment=environment, log_dir=tmp_path / "logs", watch=watch
    )


async def launch(launcher: QtRuntimeLauncher) -> object:
    return await launcher.launch(cwd=None, on_event=lambda event: None, on_lost=lambda why: None)


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX shell and signals")
def test_crashes_and_requested_ends_are_told_apart_and_reported_before_the_next_start(
    run: Run[None], backend: Backend, tmp_path: Path
) -> None:
    env = runtime_env(backend, "http://127.0.0.1:9", tmp_path / "runtime-data")
    exits_at_once = ["/bin/sh", "-c", "exit 3"]
    missing = [str(tmp_path / "no-such-runtime")]
    watch = Watch()
    launcher = make_launcher(env, tmp_path, [exits_at_once, missing, RUNTIME, RUNTIME], watch.started)

    async def scenario() -> None:
        with pytest.raises(LaunchError, match="exited with status 3"):
            await launch(launcher)
        # The next start waits until the last end has been reported: a crash loop's rollback must
        # decide which runtime it is.
        with pytest.raises(LaunchError, match="could not be run"):
            await launch(launcher)
        await watch.ends(2)
        assert watch.events == [
            ("start", exits_at_once),
            ("end", True),
            ("start", missing),
            ("end", True),
        ]
        watch.events.clear()

        stopped = await launch(launcher)
        await stopped.stop(shutdown=True)  # type: ignore[attr-defined]
        await watch.ends(1)
        assert watch.events == [("start", RUNTIME), ("end", False)]
        watch.events.clear()

        killed = await launch(launcher)
        os.kill(killed.pid, signal.SIGKILL)  # type: ignore[attr-defined]
        await watch.ends(1)
        assert watch.events == [("start", RUNTIME), ("end", True)]
        await launcher.settled()

    run(scenario())
