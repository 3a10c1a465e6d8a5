"""The embedded backend as clients share it (``desktop.launch.backend``, real ``serve`` processes): one
per data directory however many clients start at once, reused while it runs, left running after its
clients for its idle timeout (then gone, state file and all), a stale state file from a killed backend
replaced, and the window's way out — stopping the one it started unless another client holds it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from contracts.local_backend import STATE_FILE, ClientLease
from desktop.launch.backend import backend_for_session, open_backend

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and process checks")

QUIET = {"PATH": os.environ.get("PATH", "")}


def servers(directory: Path) -> list[psutil.Process]:
    """The ``serve`` processes of ``directory`` (zombies excluded)."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        command = process.info.get("cmdline") or []
        try:
            if "serve" in command and str(directory) in command and process.status() != psutil.STATUS_ZOMBIE:
                found.append(process)
        except psutil.Error:
            continue
    return found


@pytest.fixture
def directory(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "backend"
    yield path
    for process in servers(path):  # whatever a failed test left running
        with contextlib.suppress(psutil.Error):
            process.kill()


def state_pid(directory: Path) -> int:
    return int(json.loads((directory / STATE_FILE).read_text())["pid"])


async def gone(process: psutil.Process, timeout: float) -> bool:
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        try:
            if process.status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        await asyncio.sleep(0.05)
    return False


async def test_the_backend_started_for_one_client_serves_the_next_and_outlives_both(directory: Path) -> None:
    async with open_backend(QUIET, data_dir=directory) as backend:
        assert backend.runtime_variables() == {"COWORK_BACKEND_STATE_FILE": str(directory / STATE_FILE)}
        first = await backend.access()
    pid = state_pid(directory)
    async with backend_for_session(QUIET, data_dir=directory) as second:
        assert second.url == first.url
        assert second.token == first.token
    assert [process.pid for process in servers(directory)] == [pid]
    assert psutil.Process(pid).is_running(), "left running for the next client"


async def test_two_clients_starting_at_once_end_with_one_backend_both_use(directory: Path) -> None:
    async def client() -> str:
        async with backend_for_session(QUIET, data_dir=directory) as access:
            await asyncio.sleep(0.2)  # both use it at the same time
            return access.url

    first, second = await asyncio.gather(client(), client())
    assert first == second
    assert len(servers(directory)) == 1


async def test_the_backend_stops_after_its_idle_timeout_once_its_last_client_is_gone(directory: Path) -> None:
    environ = {**QUIET, "COWORK_BACKEND_IDLE_TIMEOUT": "0.3"}
    async with backend_for_session(environ, data_dir=directory):
        process = psutil.Process(state_pid(directory))
        await asyncio.sleep(1.0)  # past the timeout, but this client holds its lease
        assert process.is_running()
    assert await gone(process, timeout=30)
    assert not (directory / STATE_FILE).exists()


async def test_a_state_file_left_by_a_killed_backend_is_replaced_by_a_new_backend(directory: Path) -> None:
    async with backend_for_session(QUIET, data_dir=directory) as before:
        pass
    killed = psutil.Process(state_pid(directory))
    os.kill(killed.pid, signal.SIGKILL)
    assert await gone(killed, timeout=10)
    assert (directory / STATE_FILE).exists(), "a killed backend leaves its state file"
    async with backend_for_session(QUIET, data_dir=directory) as after:
        assert after.url != before.url or state_pid(directory) != killed.pid
    assert state_pid(directory) != killed.pid
    assert len(servers(directory)) == 1


async def test_a_state_file_naming_a_port_that_answers_otherwise_is_not_taken_for_the_backend(
    directory: Path,
) -> None:
    async def impostor(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b'HTTP/1.1 200 OK\r\nContent-Length: 12\r\nConnection: close\r\n\r\n{"keys": []}')
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(impostor, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    directory.mkdir(parents=True)
    stale = {
        "url": f"http://127.0.0.1:{port}",
        "token": "t.o.k",
        "pid": os.getpid(),  # a live process, and a port that answers: still not that backend
        "tenantId": "local",
        "userId": "jane",
        "policyKeys": [{"keyId": "gone", "publicKey": "AAAA"}],
        "startedAt": "2026-02-21T15:00:00+00:00",
    }
    (directory / STATE_FILE).write_text(json.dumps(stale))
    async with server, backend_for_session(QUIET, data_dir=directory) as access:
        assert access.url != stale["url"]
        assert state_pid(directory) != os.getpid()


async def test_the_window_stops_the_backend_it_started_unless_another_client_holds_it(
    directory: Path,
) -> None:
    async with backend_for_session(QUIET, data_dir=directory, stop_started=True):
        started = psutil.Process(state_pid(directory))
    assert await gone(started, timeout=20)
    assert not (directory / STATE_FILE).exists()

    with ClientLease(directory):  # a cowork exec run, say, using the same backend
        async with backend_for_session(QUIET, data_dir=directory, stop_started=True):
            shared = psutil.Process(state_pid(directory))
        await asyncio.sleep(0.3)
        assert shared.is_running(), "another client holds it: left to its idle timeout"
    assert (directory / STATE_FILE).exists()


async def test_a_configured_backend_is_named_to_the_runtime_at_once_and_checked_while_it_starts() -> None:
    token = "e30.eyJ0aWQiOiAidCIsICJzdWIiOiAidSJ9.c2ln"  # {"tid": "t", "sub": "u"}
    environ = {"COWORK_BACKEND_URL": "http://127.0.0.1:9", "COWORK_BACKEND_TOKEN": token}
    async with open_backend(environ) as backend:
        assert backend.runtime_variables() == {
            "COWORK_BACKEND_URL": "http://127.0.0.1:9",
            "COWORK_BACKEND_TOKEN": token,
        }
        with pytest.raises(Exception, match="cannot be reached"):
            await backend.access()
