"""``serve --idle-timeout``: the embedded backend stops once no client has needed it for the timeout —
a held lease, an open connection or a request keeps it up; a client holding the start lock defers
the decision; on stopping, the state file goes first. The real process is checked end to end."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import time
from pathlib import Path

import httpx
from uvicorn.server import ServerState

from backend.idle import IdleWatch
from contracts.local_backend import LOCK_FILE, STATE_FILE, ClientLease, try_lock
from tests.support.peers import REPO_ROOT


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def watch(tmp_path: Path, timeout_s: float = 10) -> tuple[IdleWatch, Clock, ServerState]:
    (tmp_path / STATE_FILE).write_text(json.dumps({"pid": os.getpid()}))  # this process "serves"
    clock = Clock()
    return IdleWatch(tmp_path, timeout_s, clock=clock), clock, ServerState()


def test_idle_only_after_the_timeout_without_anyone(tmp_path: Path) -> None:
    idle, clock, state = watch(tmp_path)
    clock.now += 9.9
    assert not idle.idle(state)
    assert (tmp_path / STATE_FILE).exists()
    clock.now += 0.2
    assert idle.idle(state)
    assert not (tmp_path / STATE_FILE).exists(), "the state file goes before the server stops"


def test_a_held_lease_keeps_it_up_and_the_timeout_counts_from_its_release(tmp_path: Path) -> None:
    idle, clock, state = watch(tmp_path)
    with ClientLease(tmp_path):
        clock.now += 3600
        assert not idle.idle(state)
    clock.now += 9
    assert not idle.idle(state)
    clock.now += 2
    assert idle.idle(state)


def test_requests_and_open_connections_keep_it_up(tmp_path: Path) -> None:
    idle, clock, state = watch(tmp_path)
    clock.now += 8
    state.total_requests += 1  # a request since the last look
    assert not idle.idle(state)
    clock.now += 8
    state.connections.add(object())  # type: ignore[arg-type]  # a connection kept open
    assert not idle.idle(state)
    state.connections.clear()
    clock.now += 8
    assert not idle.idle(state)
    clock.now += 3
    assert idle.idle(state)


def test_a_client_holding_the_start_lock_defers_the_stop(tmp_path: Path) -> None:
    idle, clock, state = watch(tmp_path)
    clock.now += 11
    with try_lock(tmp_path / LOCK_FILE) as locked:
        assert locked
        assert not idle.idle(state)  # a client is looking for this backend right now
    assert (tmp_path / STATE_FILE).exists()
    clock.now += 11
    assert idle.idle(state)


def test_a_server_whose_data_directory_was_removed_stops_at_the_next_look(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    idle, _, state = watch(data)
    with ClientLease(data) as lease:
        assert not idle.idle(state)
        lease.release()
        shutil.rmtree(data)
        assert idle.idle(state), "no client can find it any more"


async def test_a_look_that_fails_is_tried_again_rather_than_ending_the_watch(tmp_path: Path) -> None:
    idle, clock, state = watch(tmp_path, timeout_s=0.01)
    looks: list[int] = []
    real = idle.idle

    def flaky(state: ServerState) -> bool:
        looks.append(1)
        clock.now += 1
        if len(looks) == 1:
            raise PermissionError("the clients folder cannot be read right now")
        return real(state)

    idle.idle = flaky  # type: ignore[method-assign]
    stopped: list[bool] = []
    async with asyncio.timeout(10):
        await idle.run(state, lambda: stopped.append(True))
    assert stopped == [True]
    assert len(looks) >= 2


def test_the_interval_between_looks_follows_the_timeout_within_bounds(tmp_path: Path) -> None:
    assert IdleWatch(tmp_path, 600).interval_s == 5.0
    assert IdleWatch(tmp_path, 2).interval_s == 0.5
    assert IdleWatch(tmp_path, 0.01).interval_s == 0.05


async def test_the_real_server_stops_after_its_idle_timeout_and_not_while_a_client_holds_a_lease(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    lease = ClientLease(data)
    process = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "backend.cli", "serve", "--store", "local", "--data-dir", str(data)),
        *("--port", "0", "--log-level", "info", "--idle-timeout", "0.4"),
        cwd=REPO_ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        async with asyncio.timeout(60):
            ready = json.loads(await process.stdout.readline())
        async with httpx.AsyncClient() as http:
            assert (await http.get(f"{ready['url']}/policy/keys")).status_code in (200, 401)
        await asyncio.sleep(1.5)  # well past the timeout, with the lease held
        assert process.returncode is None
        lease.release()
        started = time.monotonic()
        async with asyncio.timeout(30):
            status = await process.wait()
        assert status == 0
        assert time.monotonic() - started < 20
        assert not (data / STATE_FILE).exists()
        assert process.stderr is not None
        assert b"no client for 0.4 s: stopping" in await process.stderr.read()
    finally:
        lease.release()
        if process.returncode is None:
            process.kill()
            await process.wait()
