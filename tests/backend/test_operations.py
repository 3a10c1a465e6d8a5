"""The operators' commands as real processes: ``cowork-backend audit tail|verify`` (and the former
``audit-verify``), ``quota set|show`` and ``token --admin``, on the local store of a data directory."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from queue import Empty, Queue
from typing import Any

import httpx
import pytest

from backend.audit.service import AuditService
from backend.common.auth import Principal
from backend.storage.local import DATABASE_FILE, open_local_stores
from contracts.events import EventEnvelope
from contracts.validation import validate_json_value
from tests.backend.helpers import ManualClock, envelope
from tests.support.backend import start_backend
from tests.support.peers import REPO_ROOT

# (user, session, type) of the events each test starts with, in this order.
EVENTS = [
    ("alice", "sess_1", "session_started"),
    ("alice", "sess_1", "tool_completed"),
    ("bob", "sess_2", "tool_completed"),
    ("alice", "sess_1", "approval_requested"),
    ("bob", "sess_2", "session_completed"),
]


def _record(data: Path, events: list[tuple[str, str, str]], tenant: str = "acme", first: int = 0) -> None:
    stores = open_local_stores(data)
    try:
        service = AuditService(stores.audit, ManualClock())
        for index, (user, session, kind) in enumerate(events, first):
            body = envelope(tenant, user, session_id=session, eventType=kind, eventId=f"evt_{index}")
            service.append(Principal(tenant, user), [validate_json_value(EventEnvelope, body)])
    finally:
        stores.close()


def _environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("COWORK_")}


def _run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "backend.cli", *args],
        cwd=REPO_ROOT,
        env=_environment(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _lines(output: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in output.splitlines() if line.strip()]


@pytest.fixture
def data(tmp_path: Path) -> Path:
    directory = tmp_path / "data"
    _record(directory, EVENTS)
    return directory


def test_tail_prints_the_latest_records_oldest_first_with_the_filters_given(data: Path) -> None:
    store = ["--store", "local", "--data-dir", str(data), "--tenant", "acme"]
    latest = _run("audit", "tail", *store, "-n", "3")
    assert latest.returncode == 0, latest.stderr
    records = _lines(latest.stdout)
    assert [r["sequence"] for r in records] == [3, 4, 5]
    assert records[0]["event"]["userId"] == "bob"
    assert set(records[0]) == {"sequence", "eventId", "receivedAt", "prevHash", "hash", "event"}
    filtered = _run(
        "audit",
        "tail",
        *store,
        "--session",
        "sess_1",
        "--type",
        "tool_completed",
        "--type",
        "session_started",
    )
    assert [r["eventId"] for r in _lines(filtered.stdout)] == ["evt_0", "evt_1"]
    timed = _run(
        "audit",
        "tail",
        *store,
        "--user",
        "bob",
        "--since",
        "2026-03-02T08:00:00Z",
        "--until",
        "2026-03-02T10:00Z",
    )
    assert [r["eventId"] for r in _lines(timed.stdout)] == ["evt_2", "evt_4"]
    assert _lines(_run("audit", "tail", *store, "--since", "2026-03-02T09:00:01Z").stdout) == []
    # Another tenant's records are another tenant's.
    assert (
        _lines(
            _run("audit", "tail", "--store", "local", "--data-dir", str(data), "--tenant", "globex").stdout
        )
        == []
    )


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--tenant", "not a tenant"], "not a valid tenant ID"),
        (["--tenant", "acme", "--since", "2026-03-02T09:00:00"], "needs a zone"),
        (["--tenant", "acme", "--type", "coffee_brewed"], "invalid choice"),
        (
            ["--tenant", "acme", "--since", "2026-03-03T00:00Z", "--until", "2026-03-02T00:00Z"],
            "--since must be",
        ),
    ],
)
def test_tail_refuses_bad_arguments_with_exit_2(data: Path, args: list[str], says: str) -> None:
    result = _run("audit", "tail", "--store", "local", "--data-dir", str(data), *args)
    assert result.returncode == 2
    assert says in result.stderr
    assert "Traceback" not in result.stderr


class _Follower:
    """``audit tail --follow`` running, its output lines read by a thread into a queue."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.lines: Queue[str] = Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def take(self, count: int, timeout: float = 20) -> list[dict[str, Any]]:
        taken = []
        for _ in range(count):
            try:
                taken.append(json.loads(self.lines.get(timeout=timeout)))
            except Empty:
                raise AssertionError(f"only {len(taken)} of {count} lines came") from None
        return taken


@pytest.fixture
def follow(data: Path) -> Iterator[_Follower]:
    command = [
        sys.executable,
        "-m",
        "backend.cli",
        "audit",
        "tail",
        "--store",
        "local",
        "--data-dir",
        str(data),
    ]
    with subprocess.Popen(
        [*command, "--tenant", "acme", "-n", "2", "--session", "sess_1", "--follow", "--interval", "0.1"],
        cwd=REPO_ROOT,
        env=_environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        try:
            yield _Follower(process)
        finally:
            if process.poll() is None:
                process.kill()


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_follow_prints_new_matching_records_as_they_arrive_until_interrupted(
    data: Path, follow: _Follower, stop: signal.Signals
) -> None:
    assert [r["sequence"] for r in follow.take(2)] == [2, 4]
    _record(data, [("bob", "sess_2", "tool_completed"), ("alice", "sess_1", "tool_completed")], first=5)
    assert [r["eventId"] for r in follow.take(1)] == ["evt_6"]
    _record(data, [("alice", "sess_1", "session_completed")], first=7)
    assert [r["eventId"] for r in follow.take(1)] == ["evt_7"]
    assert follow.lines.empty()
    follow.process.send_signal(stop)
    assert follow.process.wait(20) == 0


def test_verify_exits_0_then_1_naming_the_first_broken_link_and_audit_verify_says_the_same(
    data: Path,
) -> None:
    store = ["--store", "local", "--data-dir", str(data), "--tenant", "acme"]
    good = _run("audit", "verify", *store)
    assert good.returncode == 0, good.stderr
    verdict = json.loads(good.stdout)
    assert (verdict["ok"], verdict["checked"], verdict["headSequence"]) == (True, 5, 5)
    with sqlite3.connect(data / DATABASE_FILE) as db:
        db.execute("DROP TRIGGER audit_is_append_only_update")
        db.execute("UPDATE audit SET document = replace(document, 'RunCommand', 'rm -rf') WHERE sequence = 3")
    bad = _run("audit", "verify", *store)
    former = _run("audit-verify", *store)
    assert (bad.returncode, former.returncode) == (1, 1)
    verdict = json.loads(bad.stdout)
    assert (verdict["ok"], verdict["brokenAt"], verdict["checked"]) == (False, 3, 2)
    assert verdict["brokenLink"]["eventId"] == "evt_2"
    assert verdict["brokenLink"]["reason"] == "hash"
    former_verdict = json.loads(former.stdout)
    assert {k: v for k, v in former_verdict.items() if k != "verifiedAt"} == {
        k: v for k, v in verdict.items() if k != "verifiedAt"
    }


def test_quota_set_and_show(tmp_path: Path, data: Path) -> None:
    config = tmp_path / "config"
    (config / "quotas").mkdir(parents=True)
    (config / "quotas" / "default.toml").write_text("sessionsPerUser = 5\nstorageBytes = 1000000\n")
    changed = _run(
        "quota",
        "set",
        "acme",
        "--config-dir",
        str(config),
        "--sessions-per-user",
        "2",
        "--tokens-per-day",
        "5000",
    )
    assert changed.returncode == 0, changed.stderr
    assert json.loads(changed.stdout)["limits"] == {
        "sessionsPerUser": 2,
        "tokensPerDay": 5000,
        "storageBytes": 1000000,
    }
    lifted = _run("quota", "set", "acme", "--config-dir", str(config), "--storage-bytes", "unlimited")
    assert json.loads(lifted.stdout)["limits"]["storageBytes"] is None
    back = _run("quota", "set", "acme", "--config-dir", str(config), "--sessions-per-user", "default")
    assert json.loads(back.stdout)["file"] == {"tokensPerDay": 5000, "storageBytes": "unlimited"}
    stores = open_local_stores(data)
    try:
        stores.usage.add("acme", "storageBytes", 4096)
    finally:
        stores.close()
    shown = _run(
        "quota", "show", "acme", "--config-dir", str(config), "--store", "local", "--data-dir", str(data)
    )
    assert shown.returncode == 0, shown.stderr
    report = json.loads(shown.stdout)
    assert report["limits"] == {"sessionsPerUser": 5, "tokensPerDay": 5000, "storageBytes": None}
    assert report["setIn"] == {
        "sessionsPerUser": "quotas/default.toml",
        "storageBytes": "quotas/acme.toml",
        "tokensPerDay": "quotas/acme.toml",
    }
    assert (report["usage"]["storageBytes"], report["usage"]["tokensToday"]) == (4096, 0)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["set", "acme"], "name at least one limit"),
        (["set", "acme", "--tokens-per-day", "-5"], "must be a whole number"),
        (["set", "acme", "--tokens-per-day", "lots"], "must be a whole number"),
        (["set", "not a tenant", "--tokens-per-day", "5"], "not a valid tenant ID"),
        (["show", "broken", "--no-usage"], "quotas/broken.toml"),
    ],
)
def test_quota_commands_refuse_bad_input_with_exit_2(tmp_path: Path, args: list[str], says: str) -> None:
    (tmp_path / "quotas").mkdir()
    (tmp_path / "quotas" / "broken.toml").write_text("tokensPerDay = -1\n")
    result = _run("quota", *args, "--config-dir", str(tmp_path))
    assert result.returncode == 2
    assert says in result.stderr
    assert "Traceback" not in result.stderr


def test_an_admin_token_from_the_cli_reads_the_served_audit_log(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with start_backend(data) as backend:
        _record(data, EVENTS[:2], tenant="local")
        minted = _run("token", "--data-dir", str(data), "--tenant", "local", "--user", "ops", "--admin")
        plain = _run("token", "--data-dir", str(data), "--tenant", "local", "--user", "ops")
        with httpx.Client(base_url=backend.url, timeout=10) as http:
            admin = http.get("/audit/events", headers={"Authorization": f"Bearer {minted.stdout.strip()}"})
            refused = http.get("/audit/verify", headers={"Authorization": f"Bearer {plain.stdout.strip()}"})
    assert admin.status_code == 200, admin.text
    assert [e["eventId"] for e in admin.json()["events"]] == ["evt_1", "evt_0"]
    assert (refused.status_code, refused.json()["code"]) == (403, "PERMISSION_DENIED")
