"""``cowork-backend``: the real ``serve --store local`` process (ready line, state file, clean
shutdown, nothing lost across a restart) and the maintenance commands."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import os
import signal
import sqlite3
import stat
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from backend.cli import main
from backend.common.auth import Principal, TokenVerifier
from backend.common.clock import SystemClock
from backend.common.keys import load_public_key
from backend.storage.local import DATABASE_FILE
from tests.backend.helpers import PROJECT, envelope, history_upload, session_body, upload_body
from tests.support.peers import REPO_ROOT


@asynccontextmanager
async def backend_process(
    data_dir: Path, *extra: str
) -> AsyncIterator[tuple[asyncio.subprocess.Process, dict[str, Any]]]:
    """``cowork-backend serve --store local`` on a free port; its ready line."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "backend.cli",
        "serve",
        "--store",
        "local",
        "--data-dir",
        str(data_dir),
        "--port",
        "0",
        *extra,
        cwd=REPO_ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        async with asyncio.timeout(30):
            line = await process.stdout.readline()
        assert line, (await process.stderr.read()).decode() if process.stderr else ""
        yield process, json.loads(line)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def _stop(process: asyncio.subprocess.Process, sig: int = signal.SIGTERM) -> int:
    process.send_signal(sig)
    async with asyncio.timeout(20):
        return await process.wait()


def _state(data_dir: Path) -> dict[str, Any]:
    state: dict[str, Any] = json.loads((data_dir / "backend.json").read_text())
    return state


async def test_the_local_backend_keeps_everything_across_a_restart(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with backend_process(data) as (process, ready):
        assert ready["event"] == "ready"
        assert ready["url"].startswith("http://127.0.0.1:")
        state = _state(data)
        assert stat.S_IMODE((data / "backend.json").stat().st_mode) == 0o600
        assert stat.S_IMODE((data / "keys" / "auth_ed25519.pem").stat().st_mode) == 0o600
        assert (state["url"], state["pid"], state["tenantId"]) == (ready["url"], process.pid, "local")
        headers = {"Authorization": f"Bearer {state['token']}"}
        async with httpx.AsyncClient(base_url=ready["url"], headers=headers, timeout=30) as http:
            session = (await http.post("/sessions", json=session_body([PROJECT]))).json()
            ws, sess = session["workspaceId"], session["sessionId"]
            artifact = (
                await http.post(f"/workspaces/{ws}/artifacts", json=upload_body(ws, sess, b"kept"))
            ).json()
            await http.post(
                f"/workspaces/{ws}/artifacts", json=history_upload(ws, sess, "2026-03-02T10:00:00Z")
            )
            await http.post("/audit/events", json=envelope("local", state["userId"], ws, sess))
            await http.post(f"/sessions/{sess}/cancel", json={"reason": "closing the app"})
        assert await _stop(process) == 0
        assert not (data / "backend.json").exists()

    async with backend_process(data) as (process, ready):
        headers = {"Authorization": f"Bearer {_state(data)['token']}"}
        async with httpx.AsyncClient(base_url=ready["url"], headers=headers, timeout=30) as http:
            again = (await http.get(f"/sessions/{sess}")).json()
            content = await http.get(f"/workspaces/{ws}/artifacts/{artifact['artifactId']}/content")
            listed = (await http.get(f"/workspaces/{ws}/artifacts")).json()["artifacts"]
            resumed = await http.post(f"/sessions/{sess}/resume", json={})
            same_project = (await http.post("/sessions", json=session_body([PROJECT]))).json()
        assert await _stop(process, signal.SIGINT) == 0
    assert (again["status"], again["endReason"]) == ("SESSION_CANCELLED", "closing the app")
    assert content.content == b"kept"
    assert sorted(a["artifactType"] for a in listed) == ["session_history", "tool_output"]
    assert resumed.status_code == 410
    assert same_project["workspaceId"] == ws
    assert main(["audit-verify", "--store", "local", "--data-dir", str(data), "--tenant", "local"]) == 0


async def test_a_broken_policy_file_stops_the_server_with_a_clear_message(tmp_path: Path) -> None:
    config = tmp_path / "config"
    (config / "tenants").mkdir(parents=True)
    (config / "tenants" / "local.toml").write_text('[[capabilities]]\nname = "File.Teleport"\n')
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "backend.cli",
        "serve",
        "--data-dir",
        str(tmp_path / "d"),
        "--config-dir",
        str(config),
        cwd=REPO_ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    async with asyncio.timeout(30):
        out, err = await process.communicate()
    assert process.returncode == 2
    assert out == b""
    assert b"tenants/local.toml" in err
    assert b"capabilities[0].name" in err
    assert b"Traceback" not in err


def test_the_token_command_mints_a_token_the_data_dirs_key_verifies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(["token", "--data-dir", str(tmp_path), "--tenant", "acme", "--user", "jane", "--ttl", "600"])
        == 0
    )
    token = capsys.readouterr().out.strip()
    verifier = TokenVerifier([load_public_key(tmp_path / "keys" / "auth_ed25519.pem.pub")], SystemClock())
    assert verifier.verify(token) == Principal("acme", "jane")


def test_the_token_command_refuses_an_unusable_tenant(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["token", "--data-dir", str(tmp_path), "--tenant", "a/b", "--user", "jane"]) == 2
    assert "tenant" in capsys.readouterr().err


def test_keygen_creates_owner_only_keys_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["keygen", "--data-dir", str(tmp_path)]) == 0
    first = (tmp_path / "keys" / "policy_ed25519.pem").read_bytes()
    assert main(["keygen", "--data-dir", str(tmp_path)]) == 0
    assert (tmp_path / "keys" / "policy_ed25519.pem").read_bytes() == first
    assert stat.S_IMODE((tmp_path / "keys").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "keys" / "policy_ed25519.pem").stat().st_mode) == 0o600
    paths = json.loads(capsys.readouterr().out.splitlines()[0])
    assert Path(paths["policyPublicKey"]).exists()


def test_audit_verify_reports_the_first_broken_link(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from backend.audit.service import AuditService
    from backend.storage.local import open_local_stores
    from contracts.events import EventEnvelope
    from contracts.validation import validate_json_value
    from tests.backend.helpers import ManualClock

    stores = open_local_stores(tmp_path)
    events = [validate_json_value(EventEnvelope, envelope("acme", "alice")) for _ in range(4)]
    AuditService(stores.audit, ManualClock()).append(Principal("acme", "alice"), events)
    stores.close()
    arguments = ["audit-verify", "--store", "local", "--data-dir", str(tmp_path), "--tenant", "acme"]
    assert main(arguments) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["checked"] == 4
    with sqlite3.connect(tmp_path / DATABASE_FILE) as db:
        db.execute("DROP TRIGGER audit_is_append_only_update")
        db.execute("UPDATE audit SET document = replace(document, 'succeeded', 'failed') WHERE sequence = 3")
    assert main(arguments) == 1
    verdict = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert (verdict["ok"], verdict["brokenAt"]) == (False, 3)


def test_the_purge_command_reports_what_it_removed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["purge", "--store", "local", "--data-dir", str(tmp_path)]) == 0
    report = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert report == {
        "purged": {"workspaces": 0, "artifacts": 0, "orphaned_artifacts": 0, "orphaned_content": 0},
        "expiredSessions": 0,
        "indexed": 0,
    }


def test_serve_without_peers_for_a_lone_service_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `serve` configures the process's logging (a root handler on this test's captured stderr, closed
    # afterwards): keep that to this test, or every later log record fails to print.
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        code = main(["serve", "--store", "memory", "--data-dir", str(tmp_path), "--service", "session"])
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
    assert code == 2
    assert "peers" in capsys.readouterr().err
    assert gc.isenabled()  # the start paused the collector; a failed start turns it back on


@pytest.mark.skipif(os.name == "nt", reason="POSIX permissions")
def test_the_data_directory_is_private(tmp_path: Path) -> None:
    from backend.storage.local import open_local_stores

    open_local_stores(tmp_path / "data").close()
    assert stat.S_IMODE((tmp_path / "data").stat().st_mode) == 0o700


async def test_the_local_backend_purges_long_inactive_workspaces_after_it_starts(tmp_path: Path) -> None:
    from datetime import UTC, datetime, timedelta

    from backend.storage.local import open_local_stores
    from backend.workspace.records import WorkspaceRecord
    from contracts.enums import WorkspaceScope

    data = tmp_path / "data"
    stores = open_local_stores(data)
    long_ago = datetime.now(UTC) - timedelta(days=91)
    stale = WorkspaceRecord(
        "ws_stale", "local", "someone", WorkspaceScope.LOCAL, ("/old",), long_ago, long_ago
    )
    stores.workspaces.touch_or_create(stale)
    stores.content.put(f"ws_stale/art_old/{'a' * 64}", b"old", "text/plain")
    stores.close()
    async with backend_process(data) as (process, _):
        assert process.stderr is not None
        async with asyncio.timeout(30):
            while b"start-up purge" not in (line := await process.stderr.readline()):
                assert line, "the server ended without purging"
        report = json.loads(json.loads(line)["message"].removeprefix("start-up purge: "))
        assert await _stop(process) == 0
    assert report["workspaces"] == 1
    assert not (data / "artifacts" / "ws_stale").exists()


async def test_the_local_backend_removes_files_of_interrupted_uploads_when_it_starts(tmp_path: Path) -> None:
    from backend.storage.local import open_local_stores

    data = tmp_path / "data"
    stores = open_local_stores(data)
    kept = f"ws_a/art_kept/{'b' * 64}"
    stores.content.put(kept, b"kept", "text/plain")
    stores.close()
    # What a crash or a kill between writing and renaming leaves behind, just now and long ago.
    left = [data / "artifacts" / "ws_a" / ".tmp-k2x9_q", data / "artifacts" / "ws_b" / ".tmp-0abc"]
    for path in left:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"half an upload")
    async with backend_process(data) as (process, _):
        assert process.stderr is not None
        async with asyncio.timeout(30):
            while b"interrupted upload" not in (line := await process.stderr.readline()):
                assert line, "the server ended without reporting the interrupted uploads"
        assert await _stop(process) == 0
    logged = json.loads(line)
    assert (logged["level"], logged["count"]) == ("info", 2)
    assert logged["message"] == "removed 2 temporary files of interrupted uploads"
    assert not any(path.exists() for path in left)
    assert (data / "artifacts" / "ws_a" / f"art_kept.{'b' * 64}").read_bytes() == b"kept"


def test_the_listening_socket_sends_small_responses_at_once() -> None:
    import socket

    from backend.server import bind

    listener = bind("127.0.0.1", 0)
    with listener:
        assert listener.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
