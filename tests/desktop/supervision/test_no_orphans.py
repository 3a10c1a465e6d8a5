"""No orphan processes: when the desktop dies without a word (SIGKILL), the operating system closes
its end of the socket and the runtime exits, taking the command it was running with it."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from agent_runtime.scripted_gateway import ScriptedGatewayThread
from tests.desktop.supervision.live import held_command, runtime_env, tool_call
from tests.support.backend import Backend
from tests.support.peers import REPO_ROOT


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL and POSIX process trees")
def test_the_runtime_and_its_command_exit_when_the_desktop_is_killed(
    backend: Backend, workspace: Path, tmp_path: Path
) -> None:
    started, go = tmp_path / "started", tmp_path / "never"
    script = [tool_call("RunCommand", "c1", command=held_command(started, go)), {"text": "unreachable"}]
    with ScriptedGatewayThread({"turns": script}) as gateway:
        config = {
            "backend": {**dataclasses.asdict(backend), "data_dir": str(backend.data_dir)},
            "env": runtime_env(backend, gateway.url, tmp_path / "runtime-data"),
            "logs": str(tmp_path / "logs"),
            "workspace": str(workspace),
            "started": str(started),
        }
        with subprocess.Popen(
            [sys.executable, "-m", "tests.desktop.supervision.desktop_child", json.dumps(config)],
            cwd=REPO_ROOT,
            env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
            stdout=subprocess.PIPE,
            text=True,
        ) as desktop:
            try:
                assert desktop.stdout is not None
                line = desktop.stdout.readline()
                assert line, "the desktop stand-in ended before its runtime ran the command"
                runtime = int(json.loads(line)["runtime"])
                tree = [runtime, *(child.pid for child in psutil.Process(runtime).children(recursive=True))]
                assert len(tree) > 1, "the command runs under the runtime"
                desktop.kill()
                desktop.wait(timeout=10)
                deadline = time.monotonic() + 15
                while not all(gone(pid) for pid in tree) and time.monotonic() < deadline:
                    time.sleep(0.05)
                assert all(gone(pid) for pid in tree), [pid for pid in tree if not gone(pid)]
            finally:
                if desktop.poll() is None:
                    desktop.kill()
                    desktop.wait()
                go.touch()
