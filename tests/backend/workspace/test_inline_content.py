"""Small artifacts kept in the local store's database with their metadata, larger ones in files: every
upload reads back byte for byte whichever way it was stored, and content goes wherever its record goes
(replaced snapshots, deleted workspaces, purges)."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from backend.common.auth import TokenIssuer
from backend.common.settings import Settings
from backend.storage import Stores
from backend.storage.local import DATABASE_FILE, open_local_stores
from tests.backend.conftest import AppFactory
from tests.backend.helpers import PROJECT, BackendClient, ManualClock, history, session_body, upload_body

LIMIT = 1024


@pytest.fixture
def local(tmp_path: Path) -> Iterator[Stores]:
    stores = open_local_stores(tmp_path, inline_content_bytes=LIMIT)
    yield stores
    stores.close()


@pytest.fixture
def local_app(make_app: AppFactory, local: Stores) -> FastAPI:
    return make_app(stores=local)


@pytest.fixture
async def client(local_app: FastAPI, issuer: TokenIssuer) -> AsyncIterator[BackendClient]:
    transport = httpx.ASGITransport(app=local_app)
    async with httpx.AsyncClient(transport=transport, base_url="http://backend") as http:
        yield BackendClient(http, issuer, local_app)


@pytest.fixture
async def session(client: BackendClient) -> dict[str, Any]:
    return await client.session([PROJECT])


def _files(tmp_path: Path) -> list[Path]:
    return sorted(p for p in (tmp_path / "artifacts").rglob("*") if p.is_file())


def _content_column(tmp_path: Path, artifact_id: str) -> bytes | None:
    with sqlite3.connect(tmp_path / DATABASE_FILE) as db:
        row = db.execute("SELECT content FROM artifacts WHERE artifact_id = ?", (artifact_id,)).fetchone()
    assert row is not None
    content: bytes | None = row[0]
    return content


async def _upload(client: BackendClient, session: dict[str, Any], content: bytes, **extra: Any) -> Any:
    body = upload_body(session["workspaceId"], session["sessionId"], content, **extra)
    response = await client.call("POST", f"/workspaces/{session['workspaceId']}/artifacts", json=body)
    assert response.status_code in (200, 201), response.text
    return response.json()


async def _content(client: BackendClient, session: dict[str, Any], artifact_id: str) -> httpx.Response:
    return await client.call("GET", f"/workspaces/{session['workspaceId']}/artifacts/{artifact_id}/content")


async def test_content_up_to_the_limit_is_kept_in_the_database_and_larger_in_a_file(
    client: BackendClient, session: dict[str, Any], tmp_path: Path
) -> None:
    at_limit, over = bytes(range(256)) * (LIMIT // 256), b"x" * (LIMIT + 1)
    small = await _upload(
        client, session, at_limit, name="small.bin", content_type="application/octet-stream"
    )
    large = await _upload(client, session, over, name="large.txt")
    assert _content_column(tmp_path, small["artifactId"]) == at_limit
    assert _content_column(tmp_path, large["artifactId"]) is None
    assert [p.name for p in _files(tmp_path)] == [f"{large['artifactId']}.{large['sha256']}"]
    for stored, data in ((small, at_limit), (large, over)):
        got = await _content(client, session, stored["artifactId"])
        assert got.status_code == 200
        assert got.content == data
        assert got.headers["content-length"] == str(len(data))
        assert got.headers["etag"] == f'"{hashlib.sha256(data).hexdigest()}"'
        assert got.headers["content-disposition"].startswith("attachment")
    assert (await _content(client, session, small["artifactId"])).headers["content-type"] == (
        "application/octet-stream"
    )


async def test_an_empty_artifact_is_stored_and_read_back_empty(
    client: BackendClient, session: dict[str, Any], tmp_path: Path
) -> None:
    stored = await _upload(client, session, b"", name="empty.txt")
    assert _content_column(tmp_path, stored["artifactId"]) == b""
    got = await _content(client, session, stored["artifactId"])
    assert (got.status_code, got.content, got.headers["content-length"]) == (200, b"", "0")


async def test_a_retried_inline_upload_is_unchanged_and_a_reused_key_for_other_bytes_conflicts(
    client: BackendClient, session: dict[str, Any], tmp_path: Path
) -> None:
    path = f"/workspaces/{session['workspaceId']}/artifacts"
    body = upload_body(session["workspaceId"], session["sessionId"], b"first")
    first = await client.call("POST", path, json=body, headers={"Idempotency-Key": "k1"})
    again = await client.call("POST", path, json=body, headers={"Idempotency-Key": "k1"})
    other = upload_body(session["workspaceId"], session["sessionId"], b"second")
    clash = await client.call("POST", path, json=other, headers={"Idempotency-Key": "k1"})
    assert (first.status_code, again.status_code, again.json()["outcome"]) == (201, 200, "unchanged")
    assert clash.status_code == 409
    assert (await _content(client, session, first.json()["artifactId"])).content == b"first"
    assert _content_column(tmp_path, first.json()["artifactId"]) == b"first"


async def _snapshot(
    client: BackendClient, session: dict[str, Any], minute: int, text: str = "hello"
) -> dict[str, Any]:
    data = history(session["workspaceId"], session["sessionId"], f"2026-03-02T07:{minute:02d}:00Z", text)
    stored: dict[str, Any] = await _upload(
        client,
        session,
        data,
        artifact_type="session_history",
        name="session_history.json",
        task_id=None,
        step_id=None,
        content_type="application/json",
    )
    stored["data"] = data
    return stored


async def test_a_session_history_moves_between_the_database_and_files_as_it_grows_and_shrinks(
    client: BackendClient, session: dict[str, Any], tmp_path: Path
) -> None:
    first = await _snapshot(client, session, 1)
    assert (first["outcome"], _files(tmp_path)) == ("created", [])
    grown = await _snapshot(client, session, 2, "long " * 400)
    assert grown["outcome"] == "replaced"
    assert _content_column(tmp_path, grown["artifactId"]) is None
    assert [p.name for p in _files(tmp_path)] == [f"{grown['artifactId']}.{grown['sha256']}"]
    stale = await _snapshot(client, session, 0, "older")
    assert stale["outcome"] == "superseded"
    shrunk = await _snapshot(client, session, 3, "short again")
    assert shrunk["outcome"] == "replaced"
    # The file of the replaced snapshot is gone; the newest one's bytes are in the database.
    assert _files(tmp_path) == []
    assert _content_column(tmp_path, shrunk["artifactId"]) == shrunk["data"]
    got = await _content(client, session, shrunk["artifactId"])
    assert got.content == shrunk["data"]


async def test_deleting_a_workspace_takes_its_inline_content_with_it(
    client: BackendClient, session: dict[str, Any], tmp_path: Path
) -> None:
    stored = await _upload(client, session, b"secret notes")
    assert (await client.call("DELETE", f"/workspaces/{session['workspaceId']}")).status_code == 204
    with sqlite3.connect(tmp_path / DATABASE_FILE) as db:
        assert db.execute("SELECT COUNT(*) FROM artifacts").fetchone() == (0,)
    # The same project gets a fresh workspace under the same ID; the old artifact is not in it.
    again = await client.session([PROJECT])
    assert again["workspaceId"] == session["workspaceId"]
    assert (await _content(client, again, stored["artifactId"])).status_code == 404


async def test_a_purge_sweeps_a_stray_file_under_an_inline_records_key_and_keeps_the_record(
    client: BackendClient, clock: ManualClock, local_app: FastAPI, tmp_path: Path
) -> None:
    # Content stores stamp files with the real time, so this test's clock starts from it.
    clock.moment = datetime.now(UTC)
    session = await client.session([PROJECT])
    stored = await _upload(client, session, b"inline bytes")
    # A file under an inline record's key can only be left over (say, by an older configuration).
    stray = tmp_path / "artifacts" / session["workspaceId"] / f"{stored['artifactId']}.{stored['sha256']}"
    stray.parent.mkdir(parents=True)
    stray.write_bytes(b"left over")
    clock.advance(seconds=2 * Settings().orphan_grace.total_seconds())
    report = local_app.state.backend.workspaces.purge()
    assert report.orphaned_content == 1
    assert not stray.exists()
    assert (await _content(client, session, stored["artifactId"])).content == b"inline bytes"


async def test_a_purge_removes_inline_artifacts_whose_workspace_is_gone(
    client: BackendClient, session: dict[str, Any], local: Stores, local_app: FastAPI, tmp_path: Path
) -> None:
    stored = await _upload(client, session, b"orphaned bytes")
    with sqlite3.connect(tmp_path / DATABASE_FILE) as db:
        db.execute("DELETE FROM workspaces")
    report = local_app.state.backend.workspaces.purge()
    assert report.orphaned_artifacts == 1
    assert local.workspaces.find_artifact(session["workspaceId"], stored["artifactId"]) is None
    with sqlite3.connect(tmp_path / DATABASE_FILE) as db:
        assert db.execute("SELECT COUNT(*) FROM artifacts").fetchone() == (0,)


async def test_with_inline_content_off_every_upload_is_a_file(
    make_app: AppFactory, issuer: TokenIssuer, tmp_path: Path
) -> None:
    stores = open_local_stores(tmp_path, inline_content_bytes=0)
    try:
        app = make_app(stores=stores)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://b") as http:
            api = BackendClient(http, issuer, app)
            created = (await api.call("POST", "/sessions", json=session_body([PROJECT]))).json()
            stored = await _upload(api, created, b"tiny")
            assert _content_column(tmp_path, stored["artifactId"]) is None
            assert len(_files(tmp_path)) == 1
            assert (await _content(api, created, stored["artifactId"])).content == b"tiny"
    finally:
        stores.close()
