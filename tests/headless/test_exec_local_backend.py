"""``cowork exec`` with nothing configured, as a user runs it: the first run starts the embedded backend
and leaves it running; the next run reuses it (and so do two runs started at the same moment — one
backend for both); a state file left by a killed backend does not stand in the way. Output and exit
status are those of a run against a configured backend."""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from agent_runtime.scripted_gateway import ScriptedGatewayThread
from tests.headless.support import (
    Running,
    base_environment,
    local_backend_dir,
    local_backends,
    run_cowork,
    stop_local_backends,
    tool_call,
)


@pytest.fixture
def user_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """A user's environment: a fresh data directory, no backend configured."""
    env = base_environment(tmp_path, None)
    yield env
    stop_local_backends(env)


def turns(workspace: Path, name: str) -> list[dict[str, object]]:
    return [
        tool_call("WriteFile", f"c_{name}", path=str(workspace / f"{name}.txt"), content=f"{name}\n"),
        {"text": f"Wrote {name}."},
    ]


def backend_pid(env: dict[str, str]) -> int:
    return int(json.loads((local_backend_dir(env) / "backend.json").read_text())["pid"])


def test_the_first_run_starts_the_backend_and_the_next_run_reuses_it(
    user_env: dict[str, str], workspace: Path
) -> None:
    pids = []
    for name in ("first", "second"):
        with ScriptedGatewayThread({"turns": turns(workspace, name)}) as gateway:
            result = run_cowork(
                ["-C", str(workspace), "--endpoint", gateway.url, "--approve-all", "Go"], user_env
            )
            gateway.assert_done()
        assert result.returncode == 0, result.stderr
        assert result.stdout == f"Wrote {name}.\n"
        assert (workspace / f"{name}.txt").read_text() == f"{name}\n"
        pids.append(backend_pid(user_env))
        assert [process.pid for process in local_backends(user_env)] == [pids[-1]], "left running"
    assert pids[0] == pids[1]


def test_two_runs_started_at_once_share_one_backend(user_env: dict[str, str], workspace: Path) -> None:
    with (
        ScriptedGatewayThread({"turns": turns(workspace, "left")}) as left_gateway,
        ScriptedGatewayThread({"turns": turns(workspace, "right")}) as right_gateway,
    ):
        args = ["-C", str(workspace), "--approve-all", "Go"]
        with (
            Running([*args, "--endpoint", left_gateway.url], user_env) as left,
            Running([*args, "--endpoint", right_gateway.url], user_env) as right,
        ):
            codes = (left.wait(timeout=120), right.wait(timeout=120))
            assert codes == (0, 0), left.stderr + right.stderr
            assert (left.stdout, right.stdout) == ("Wrote left.\n", "Wrote right.\n")
    assert [process.pid for process in local_backends(user_env)] == [backend_pid(user_env)]


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_a_state_file_left_by_a_killed_backend_is_no_obstacle(
    user_env: dict[str, str], workspace: Path
) -> None:
    with ScriptedGatewayThread({"turns": turns(workspace, "before")}) as gateway:
        assert (
            run_cowork(
                ["-C", str(workspace), "--endpoint", gateway.url, "--approve-all", "Go"], user_env
            ).returncode
            == 0
        )
    killed = psutil.Process(backend_pid(user_env))
    os.kill(killed.pid, signal.SIGKILL)
    psutil.wait_procs([killed], timeout=10)
    with ScriptedGatewayThread({"turns": turns(workspace, "after")}) as gateway:
        result = run_cowork(
            ["-C", str(workspace), "--endpoint", gateway.url, "--approve-all", "Go"], user_env
        )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Wrote after.\n"
    assert backend_pid(user_env) != killed.pid
