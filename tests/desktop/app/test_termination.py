"""The real ``cowork`` window ended by the system (SIGTERM at logout or shutdown, SIGINT from the
terminal that started it) closes as its Close does: the embedded backend it started stops with it."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

from tests.support.peers import REPO_ROOT

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


@contextlib.contextmanager
def window_once(ready: Callable[[], bool], what: str) -> Iterator[subprocess.Popen[str]]:
    """The real ``cowork`` window, offscreen, once ``ready()`` holds (bounded)."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", LLM_GATEWAY_ENDPOINT="http://127.0.0.1:9")
    with subprocess.Popen(
        [sys.executable, "-m", "desktop"], cwd=REPO_ROOT, env=env, stderr=subprocess.PIPE, text=True
    ) as window:
        deadline = time.monotonic() + 60
        while not ready():
            assert window.poll() is None, window.communicate()[1]
            assert time.monotonic() < deadline, f"{what} within 60 s"
            time.sleep(0.005)
        yield window


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT])
def test_a_terminated_window_stops_the_embedded_backend_it_started(home: Path, number: int) -> None:
    state = home / "data" / "Cowork" / "backend" / "backend.json"
    with window_once(state.exists, "no embedded backend started") as window:
        backend = psutil.Process(json.loads(state.read_text())["pid"])
        window.send_signal(number)
        assert window.wait(timeout=45) == 0, window.communicate()[1]
    psutil.wait_procs([backend], timeout=15)
    assert not backend.is_running()
    assert not state.exists()


def test_a_window_terminated_the_moment_it_shows_still_closes_cleanly(home: Path) -> None:
    log = home / "state" / "Cowork" / "log" / "desktop.log"

    def shown() -> bool:
        return log.exists() and "main window shown" in log.read_text()

    with window_once(shown, "the window was not shown") as window:
        window.send_signal(signal.SIGTERM)
        assert window.wait(timeout=45) == 0, window.communicate()[1]
