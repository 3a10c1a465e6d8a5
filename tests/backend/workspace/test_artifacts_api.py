"""Workspaces and artifacts over HTTP (seed 004 Workspace and session_history; seed 000 §7.5)."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from backend.common.settings import Limits, Settings
from backend.storage.memory import open_memory_stores
from contracts.errors import ErrorCode
from tests.backend.conftest import AppFactory
from tests.backend.helpers import (
    PROJECT,
    BackendClient,
    b64,
    history,
    history_upload,
    session_body,
    upload_body,
)


@pytest.fixture
async def session(api: BackendClient) -> dict[str, Any]:
    return await api.session([PROJECT])


def _artifacts(session: dict[str, Any]) -> str:
    return f"/workspaces/{session['workspaceId']}/artifacts"


async def _upload(
    api: BackendClient, session: dict[str, Any], body: dict[str, Any] | None = None, **headers: str
) -> httpx.Response:
    body = body or upload_body(session["workspaceId"], session["sessionId"])
    return await api.call("POST", _artifacts(session), json=body, headers=headers)


async def test_an_uploaded_artifact_can_be_read_back_with_its_metadata(
    api: BackendClient, session: dict[str, Any]
) -> None:
    content = b"line 1\nline 2\n" * 100
    body = upload_body(session["workspaceId"], session["sessionId"], content, name="build log.txt")
    response = await _upload(api, session, body)
    assert response.status_code == 201
    stored = response.json()
    assert stored["outcome"] == "created"
    assert (
        stored["artifactUri"]
        == f"cowork://workspaces/{session['workspaceId']}/artifacts/{stored['artifactId']}"
    )
    assert (stored["sizeBytes"], stored["sha256"]) == (len(content), hashlib.sha256(content).hexdigest())
    assert response.headers["location"].endswith(stored["artifactId"])
    metadata = (await api.call("GET", f"{_artifacts(session)}/{stored['artifactId']}")).json()
    assert metadata == {k: v for k, v in stored.items() if k != "outcome"}
    got = await api.call("GET", f"{_artifacts(session)}/{stored['artifactId']}/content")
    assert got.status_code == 200
    assert got.content == content
    assert got.headers["content-type"].startswith("text/plain")
    assert got.headers["content-disposition"] == "attachment; filename*=UTF-8''build%20log.txt"
    assert got.headers["x-content-type-options"] == "nosniff"
    assert got.headers["etag"] == f'"{stored["sha256"]}"'


async def test_a_retried_upload_is_the_same_artifact_not_a_duplicate(
    api: BackendClient, session: dict[str, Any]
) -> None:
    first, again = await _upload(api, session), await _upload(api, session)
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["artifactId"] == first.json()["artifactId"]
    assert again.json()["outcome"] == "unchanged"
    assert len((await api.call("GET", _artifacts(session))).json()["artifacts"]) == 1


async def test_an_idempotency_key_makes_a_retry_return_the_first_upload(
    api: BackendClient, session: dict[str, Any]
) -> None:
    first = await _upload(api, session, **{"Idempotency-Key": "upload-42"})
    again = await _upload(api, session, **{"Idempotency-Key": "upload-42"})
    other = await _upload(api, session, **{"Idempotency-Key": "upload-43"})
    assert again.json()["artifactId"] == first.json()["artifactId"] != other.json()["artifactId"]
    conflicting = upload_body(session["workspaceId"], session["sessionId"], b"something else")
    reused = await _upload(api, session, conflicting, **{"Idempotency-Key": "upload-42"})
    assert reused.status_code == 409
    assert reused.json()["details"]["field"] == "Idempotency-Key"


@pytest.mark.parametrize(
    "encoded", ["abc", "!!!!", "YWJj\nZGVm", "YQ", "YW Jj", "data:text/plain;base64,YWJj"]
)
async def test_malformed_base64_is_refused_naming_the_field(
    api: BackendClient, session: dict[str, Any], encoded: str
) -> None:
    body = {**upload_body(session["workspaceId"], session["sessionId"]), "contentBase64": encoded}
    response = await _upload(api, session, body)
    assert response.status_code == 400
    assert response.json()["details"]["field"] == "contentBase64"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"contentType": "text/html\r\nSet-Cookie: a=b"}, "contentType"),
        ({"artifactName": "evil\nname"}, "artifactName"),
        ({"artifactType": "executable"}, "artifactType"),
        ({"taskId": None}, "(root)"),
        ({"workspaceId": "ws_other"}, "workspaceId"),
    ],
)
async def test_upload_fields_are_validated(
    api: BackendClient, session: dict[str, Any], change: dict[str, Any], field: str
) -> None:
    body = {
        k: v
        for k, v in {**upload_body(session["workspaceId"], session["sessionId"]), **change}.items()
        if v is not None
    }
    response = await _upload(api, session, body)
    assert response.status_code == 400
    assert response.json()["details"]["field"] == field


async def test_an_artifact_must_belong_to_one_of_the_callers_sessions_in_that_workspace(
    api: BackendClient, session: dict[str, Any]
) -> None:
    unknown = await _upload(api, session, upload_body(session["workspaceId"], "sess_unknown"))
    assert (unknown.status_code, unknown.json()["code"]) == (404, ErrorCode.SESSION_NOT_FOUND)
    elsewhere = await api.session(["/home/alice/other"])
    wrong_workspace = await _upload(api, session, upload_body(session["workspaceId"], elsewhere["sessionId"]))
    assert (wrong_workspace.status_code, wrong_workspace.json()["details"]["field"]) == (400, "sessionId")


async def test_artifacts_are_listed_by_session_task_and_type(
    api: BackendClient, session: dict[str, Any]
) -> None:
    ws, sess = session["workspaceId"], session["sessionId"]
    later = await api.session([PROJECT])
    await _upload(api, session, upload_body(ws, sess, b"a", name="a", task_id="task_1"))
    await _upload(
        api, session, upload_body(ws, sess, b"b", name="b", task_id="task_2", artifact_type="file_diff")
    )
    await _upload(api, session, upload_body(ws, later["sessionId"], b"c", name="c", task_id="task_1"))

    async def names(query: str) -> list[str]:
        listed = (await api.call("GET", f"{_artifacts(session)}{query}")).json()["artifacts"]
        return sorted(a["artifactName"] for a in listed)

    assert await names("") == ["a", "b", "c"]
    assert await names(f"?sessionId={sess}") == ["a", "b"]
    assert await names("?taskId=task_1") == ["a", "c"]
    assert await names(f"?sessionId={sess}&artifactType=file_diff") == ["b"]
    bad = await api.call("GET", f"{_artifacts(session)}?artifactType=nonsense")
    assert (bad.status_code, bad.json()["details"]["field"]) == (400, "artifactType")


async def test_the_session_history_is_one_artifact_replaced_only_by_newer_snapshots(
    api: BackendClient, session: dict[str, Any]
) -> None:
    ws, sess = session["workspaceId"], session["sessionId"]
    first = await _upload(api, session, history_upload(ws, sess, "2026-03-02T07:00:00Z", "first"))
    newer = await _upload(api, session, history_upload(ws, sess, "2026-03-02T08:00:00Z", "second"))
    older = await _upload(api, session, history_upload(ws, sess, "2026-03-02T07:30:00Z", "stale"))
    same = await _upload(api, session, history_upload(ws, sess, "2026-03-02T08:00:00Z", "second"))
    assert [r.status_code for r in (first, newer, older, same)] == [201, 201, 200, 200]
    assert [r.json()["outcome"] for r in (first, newer, older, same)] == [
        "created",
        "replaced",
        "superseded",
        "unchanged",
    ]
    assert len({r.json()["artifactId"] for r in (first, newer, older, same)}) == 1
    assert newer.json()["createdAt"] == first.json()["createdAt"]
    listed = (await api.call("GET", f"{_artifacts(session)}?artifactType=session_history")).json()[
        "artifacts"
    ]
    assert len(listed) == 1
    assert listed[0]["snapshotAt"] == "2026-03-02T08:00:00Z"
    content = await api.call("GET", f"{_artifacts(session)}/{listed[0]['artifactId']}/content")
    assert content.content == history(ws, sess, "2026-03-02T08:00:00Z", "second")


async def test_snapshots_taken_at_the_same_instant_resolve_the_same_way_in_any_order(
    api: BackendClient,
) -> None:
    stamp = "2026-03-02T09:00:00Z"
    for order in (("one", "two"), ("two", "one")):
        other = await api.session([f"/home/alice/tie-{order[0]}"])
        ws, sess = other["workspaceId"], other["sessionId"]
        for text in order:
            await _upload(api, other, history_upload(ws, sess, stamp, text))
        digests = {hashlib.sha256(history(ws, sess, stamp, text)).hexdigest() for text in order}
        listed = (await api.call("GET", f"{_artifacts(other)}?artifactType=session_history")).json()[
            "artifacts"
        ]
        assert [a["sha256"] for a in listed] == [max(digests)]


async def test_a_session_history_must_be_a_valid_snapshot_of_its_own_session(
    api: BackendClient, session: dict[str, Any]
) -> None:
    ws, sess = session["workspaceId"], session["sessionId"]
    body = history_upload(ws, sess, "2026-03-02T07:00:00Z")
    not_json = {**body, "contentBase64": b64(b"hello")}
    wrong_session = {**body, "contentBase64": b64(history(ws, "sess_other", "2026-03-02T07:00:00Z"))}
    missing_field = {**body, "contentBase64": b64(b'{"workspaceId": "x"}')}
    for bad in (not_json, wrong_session, missing_field):
        response = await _upload(api, session, bad)
        assert response.status_code == 400, response.text
        assert response.json()["details"]["field"].startswith("contentBase64")


async def test_concurrent_history_uploads_keep_the_newest(
    api: BackendClient, session: dict[str, Any]
) -> None:
    ws, sess = session["workspaceId"], session["sessionId"]
    stamps = [f"2026-03-02T07:{minute:02d}:00Z" for minute in range(30)]
    await asyncio.gather(
        *(_upload(api, session, history_upload(ws, sess, stamp, stamp)) for stamp in reversed(stamps))
    )
    listed = (await api.call("GET", f"{_artifacts(session)}?artifactType=session_history")).json()[
        "artifacts"
    ]
    assert [a["snapshotAt"] for a in listed] == [stamps[-1]]


async def test_deleting_a_workspace_removes_every_artifact_and_its_content(
    make_app: AppFactory, issuer: Any
) -> None:
    stores = open_memory_stores()
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=make_app(stores=stores)), base_url="http://b"
    ) as http:
        api = BackendClient(http, issuer)
        session = await api.session([PROJECT])
        await _delete_everything(api, session)
    assert list(stores.content.list()) == []


async def _delete_everything(api: BackendClient, session: dict[str, Any]) -> None:
    ws, sess = session["workspaceId"], session["sessionId"]
    stored = (await _upload(api, session)).json()
    await _upload(api, session, history_upload(ws, sess, "2026-03-02T07:00:00Z"))
    assert (await api.call("DELETE", f"/workspaces/{ws}")).status_code == 204
    for path in (
        f"/workspaces/{ws}",
        f"{_artifacts(session)}",
        f"{_artifacts(session)}/{stored['artifactId']}/content",
    ):
        assert (await api.call("GET", path)).status_code == 404
    assert (await api.call("DELETE", f"/workspaces/{ws}")).status_code == 404


async def test_the_caller_lists_their_own_workspaces_most_recent_first(
    api: BackendClient, clock: Any
) -> None:
    first = await api.session([PROJECT])
    clock.advance(minutes=1)
    second = await api.session(["/home/alice/other"])
    await api.session([PROJECT], user="bob")
    listed = (await api.call("GET", "/workspaces")).json()["workspaces"]
    assert [w["workspaceId"] for w in listed] == [second["workspaceId"], first["workspaceId"]]
    assert listed[1]["localPaths"] == [PROJECT]


async def test_resolving_a_workspace_directly_follows_the_same_rules(api: BackendClient) -> None:
    local = (
        await api.call("POST", "/workspaces", json={"workspaceScope": "local", "localPaths": [PROJECT]})
    ).json()
    again = (
        await api.call("POST", "/workspaces", json={"workspaceScope": "local", "localPaths": [PROJECT + "/"]})
    ).json()
    assert local["workspaceId"] == again["workspaceId"]
    no_paths = await api.call("POST", "/workspaces", json={"workspaceScope": "local"})
    cloud = await api.call("POST", "/workspaces", json={"workspaceScope": "cloud"})
    assert (no_paths.status_code, cloud.status_code) == (400, 400)


async def test_uploads_past_the_memory_budget_are_rate_limited(
    make_app: AppFactory, api: BackendClient
) -> None:
    app = make_app(settings=Settings(limits=Limits(upload_budget_bytes=1500, max_artifact_bytes=1024)))
    release = asyncio.Event()
    first_started = asyncio.Event()

    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://b") as http:
        created = (await http.post("/sessions", json=session_body([PROJECT]), headers=api.headers())).json()
        ws, sess = created["workspaceId"], created["sessionId"]
        raw = httpx.Request("POST", "/", json=upload_body(ws, sess, b"x" * 600)).content

        async def slow() -> AsyncIterator[bytes]:
            yield raw[:10]
            first_started.set()
            await release.wait()
            yield raw[10:]

        headers = {**api.headers(), "Content-Type": "application/json", "Content-Length": str(len(raw))}
        held = asyncio.create_task(http.post(f"/workspaces/{ws}/artifacts", content=slow(), headers=headers))
        async with asyncio.timeout(10):
            await first_started.wait()
        second = await http.post(f"/workspaces/{ws}/artifacts", content=raw, headers=headers)
        release.set()
        first = await held
    assert second.status_code == 429
    assert (second.json()["code"], second.json()["retryable"]) == (ErrorCode.RATE_LIMITED, True)
    assert second.headers["retry-after"] == "1"
    assert first.status_code == 201


async def test_an_empty_artifact_is_stored_and_read_back_empty(
    api: BackendClient, session: dict[str, Any]
) -> None:
    stored = await _upload(api, session, upload_body(session["workspaceId"], session["sessionId"], b""))
    assert (stored.status_code, stored.json()["sizeBytes"]) == (201, 0)
    got = await api.call("GET", f"{_artifacts(session)}/{stored.json()['artifactId']}/content")
    assert (got.status_code, got.content) == (200, b"")
