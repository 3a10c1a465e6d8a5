"""The embedded backend's files (``contracts.local_backend``): the state file's checks, the idle timeout
setting, the start lock and the clients' leases — a lease nobody holds any more is stale and goes,
whatever way its client died."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from contracts.local_backend import (
    CLIENTS_DIR,
    DEFAULT_IDLE_TIMEOUT_S,
    ClientLease,
    idle_timeout_from,
    live_leases,
    parse_state,
    try_lock,
)
from tests.support.peers import REPO_ROOT

STATE = {
    "url": "http://127.0.0.1:53117",
    "token": "a.b.c",
    "pid": 4242,
    "tenantId": "local",
    "userId": "jane",
    "policyKeys": [{"keyId": "k1", "publicKey": "AAAA"}],
    "startedAt": "2026-02-21T15:00:00+00:00",
}


def test_a_state_file_reads_back_as_written() -> None:
    state = parse_state(json.dumps(STATE))
    assert (state.url, state.token, state.pid, state.tenant_id, state.user_id) == (
        "http://127.0.0.1:53117",
        "a.b.c",
        4242,
        "local",
        "jane",
    )
    assert state.to_json() == STATE


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"url": ""}, "no url"),
        ({"token": 7}, "no token"),
        ({"pid": "4242"}, "no pid"),
        ({"pid": True}, "no pid"),
        ({"pid": 0}, "no pid"),
        ({"policyKeys": []}, "no policyKeys"),
        ({"policyKeys": ["k"]}, "no policyKeys"),
    ],
)
def test_a_malformed_state_file_is_refused_naming_the_field(change: dict[str, object], says: str) -> None:
    with pytest.raises(ValueError, match=says):
        parse_state(json.dumps({**STATE, **change}))


@pytest.mark.parametrize("text", ["", "{", "[1]", "null"])
def test_a_state_file_that_is_no_json_object_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="state file"):
        parse_state(text)


def test_the_idle_timeout_comes_from_the_environment_or_defaults_to_ten_minutes() -> None:
    assert idle_timeout_from({}) == DEFAULT_IDLE_TIMEOUT_S == 600
    assert idle_timeout_from({"COWORK_BACKEND_IDLE_TIMEOUT": " 2.5 "}) == 2.5
    assert idle_timeout_from({"COWORK_BACKEND_IDLE_TIMEOUT": "0"}) == 0
    for bad in ("soon", "-1", "nan", "inf"):
        with pytest.raises(ValueError, match="COWORK_BACKEND_IDLE_TIMEOUT"):
            idle_timeout_from({"COWORK_BACKEND_IDLE_TIMEOUT": bad})


def test_the_start_lock_is_held_by_one_holder_at_a_time(tmp_path: Path) -> None:
    lock = tmp_path / "backend.lock"
    with try_lock(lock) as first:
        assert first
        with try_lock(lock) as second:
            assert not second
    with try_lock(lock) as again:
        assert again


def test_leases_are_counted_while_held_and_gone_once_released(tmp_path: Path) -> None:
    assert live_leases(tmp_path) == 0
    with ClientLease(tmp_path) as first, ClientLease(tmp_path) as second:
        assert live_leases(tmp_path) == 2
        assert live_leases(tmp_path, ignore=first.path) == 1
        second.release()
        assert live_leases(tmp_path) == 1
    assert live_leases(tmp_path) == 0
    assert list((tmp_path / CLIENTS_DIR).iterdir()) == []


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_the_lease_of_a_killed_client_is_stale_and_removed(tmp_path: Path) -> None:
    code = (
        "import sys, time; from pathlib import Path; from contracts.local_backend import ClientLease;"
        " lease = ClientLease(Path(sys.argv[1])); print(lease.path, flush=True); time.sleep(60)"
    )
    client = subprocess.Popen(
        [sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True, cwd=REPO_ROOT
    )
    try:
        assert client.stdout is not None
        path = Path(client.stdout.readline().strip())
        assert live_leases(tmp_path) == 1
        os.kill(client.pid, signal.SIGKILL)
        client.wait(timeout=10)
    finally:
        if client.poll() is None:
            client.kill()
            client.wait()
        if client.stdout is not None:
            client.stdout.close()
    assert path.exists()  # what a killed client leaves behind…
    assert live_leases(tmp_path) == 0
    assert not path.exists()  # …is found unheld and removed


def test_a_stray_file_in_the_clients_folder_is_no_lease(tmp_path: Path) -> None:
    (tmp_path / CLIENTS_DIR).mkdir()
    (tmp_path / CLIENTS_DIR / "notes.txt").write_text("not a lease")
    assert live_leases(tmp_path) == 0
    assert (tmp_path / CLIENTS_DIR / "notes.txt").exists()
