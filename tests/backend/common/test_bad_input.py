"""Bad input gets a clear answer in the seed's error shape (seed 001 §6.5) — never a crash, a traceback
or library text — with the right status: 400, 404, 405, 413, 415, 500, 503."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from backend.common.errors import StorageError
from backend.common.settings import Limits, Settings
from backend.session.records import SessionRecord
from backend.storage.memory import open_memory_stores
from contracts.errors import ErrorCode, ErrorShape
from tests.backend.conftest import AppFactory
from tests.backend.helpers import (
    PROJECT,
    BackendClient,
    b64,
    envelope,
    history,
    history_upload,
    session_body,
    upload_body,
)


def _shape(response: httpx.Response) -> ErrorShape:
    shape = ErrorShape.model_validate_json(response.content)
    assert response.headers["content-type"] == "application/json"
    return shape


async def _post_raw(
    api: BackendClient, path: str, content: bytes, content_type: str = "application/json"
) -> httpx.Response:
    return await api.http.post(path, content=content, headers={**api.headers(), "Content-Type": content_type})


@pytest.mark.parametrize(
    ("content", "field"),
    [
        (b"{not json", None),
        (b"", None),
        (b'{"clientInfo": NaN}', "clientInfo"),
        (json.dumps(session_body([PROJECT], capabilities="File.Read")).encode(), "supportedCapabilities"),
        (
            json.dumps(session_body([PROJECT], capabilities=["File.Teleport"])).encode(),
            "supportedCapabilities[0]",
        ),
        (
            json.dumps({**session_body([PROJECT]), "clientInfo": {"desktopAppVersion": 1}}).encode(),
            "clientInfo.desktopAppVersion",
        ),
        (json.dumps({**session_body([PROJECT]), "surprise": True}).encode(), "surprise"),
        (
            json.dumps({**session_body([PROJECT]), "executionEnvironment": "mainframe"}).encode(),
            "executionEnvironment",
        ),
        (json.dumps(session_body([])).encode(), "workspaceHint.localPaths"),
        (b'"just a string"', "(root)"),
    ],
)
async def test_a_bad_body_is_invalid_request_naming_the_field(
    api: BackendClient, content: bytes, field: str | None
) -> None:
    response = await _post_raw(api, "/sessions", content)
    assert response.status_code == 400
    shape = _shape(response)
    assert shape.code is ErrorCode.INVALID_REQUEST
    assert shape.retryable is False
    if field is None:
        assert shape.message == "The request body is not valid JSON"
    else:
        assert shape.details["field"] == field
        assert shape.message.startswith(field)
    assert not {"pydantic", "Traceback", "validation error"} & set(response.text.split())


def _nested(depth: int) -> str:
    """JSON text ``depth`` levels deep: arrays and objects by turns, as real documents nest."""
    opening = "".join("[" if level % 2 else '{"inner": ' for level in range(depth))
    closing = "".join("]" if level % 2 else "}" for level in reversed(range(depth)))
    return f'{opening}"deep"{closing}'


TOO_DEEP = "The request body is nested too deeply: JSON may nest at most 200 levels"


@pytest.mark.parametrize("depth", [200, 201, 300, 5000])
async def test_a_body_nested_too_deeply_is_refused_for_that_reason(api: BackendClient, depth: int) -> None:
    session = await api.session([PROJECT])
    event = json.dumps(
        {**envelope("acme", "alice", session["workspaceId"], session["sessionId"]), "payload": "TREE"}
    ).replace('"TREE"', '{"tree": ' + _nested(depth) + "}")
    cases = [
        ("/telemetry/events", event),
        ("/telemetry/events", f"[{event}]"),
        ("/audit/events", event),
        (
            "/sessions",
            json.dumps({**session_body([PROJECT]), "clientInfo": "TREE"}).replace('"TREE"', _nested(depth)),
        ),
        ("/sessions", "[" * (depth + 2) + "]" * (depth + 2)),
    ]
    for path, body in cases:
        response = await _post_raw(api, path, body.encode())
        assert response.status_code == 400, (path, response.text)
        shape = _shape(response)
        assert (shape.code, shape.message) == (ErrorCode.INVALID_REQUEST, TOO_DEEP), path
        assert shape.details["maxDepth"] == 200


async def test_a_body_nested_as_deep_as_the_limit_is_read(api: BackendClient) -> None:
    """The stated limit is the parser's: 200 levels are read (and here refused for their content)."""
    body = json.dumps({**session_body([PROJECT]), "clientInfo": "TREE"}).replace('"TREE"', _nested(199))
    response = await _post_raw(api, "/sessions", body.encode())
    assert response.status_code == 400
    assert _shape(response).details["field"].startswith("clientInfo.")


async def test_a_session_history_nested_too_deeply_is_refused_for_that_reason(api: BackendClient) -> None:
    session = await api.session([PROJECT])
    ws, sess = session["workspaceId"], session["sessionId"]
    document = json.dumps(json.loads(history(ws, sess, "2026-03-02T08:00:00Z")))
    deep = document.replace('"role": "user"', f'"role": "user", "toolCalls": [{_nested(250)}]')
    body = {**history_upload(ws, sess, "2026-03-02T08:00:00Z"), "contentBase64": b64(deep.encode())}
    response = await api.call("POST", f"/workspaces/{ws}/artifacts", json=body)
    assert response.status_code == 400
    shape = _shape(response)
    assert shape.details["field"] == "contentBase64"
    assert "nested too deeply" in shape.message
    assert "200 levels" in shape.message


async def test_a_body_that_is_not_json_is_unsupported_media_type(api: BackendClient) -> None:
    response = await _post_raw(api, "/sessions", json.dumps(session_body()).encode(), "text/plain")
    assert response.status_code == 415
    assert _shape(response).code is ErrorCode.INVALID_REQUEST


async def test_a_json_media_type_with_parameters_or_a_suffix_is_accepted(api: BackendClient) -> None:
    body = json.dumps(session_body()).encode()
    assert (await _post_raw(api, "/sessions", body, "application/json; charset=utf-8")).status_code == 201
    assert (await _post_raw(api, "/sessions", body, "application/vnd.cowork+json")).status_code == 201


@pytest.fixture
def small(make_app: AppFactory) -> Any:
    settings = Settings(limits=Limits(max_json_body_bytes=2048, max_artifact_bytes=4096))
    return make_app(settings=settings)


async def test_a_declared_oversize_body_is_refused_before_it_is_read(small: Any, api: BackendClient) -> None:
    received: list[int] = []

    async def endless() -> AsyncIterator[bytes]:
        for _ in range(1000):
            received.append(1)
            yield b" " * 1024

    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=small), base_url="http://b") as http:
        headers = {**api.headers(), "Content-Type": "application/json", "Content-Length": str(10**9)}
        response = await http.post("/sessions", content=endless(), headers=headers)
    assert response.status_code == 413
    shape = _shape(response)
    assert (shape.code, shape.details["limitBytes"]) == (ErrorCode.INVALID_REQUEST, 2048)
    assert len(received) < 5


async def test_a_chunked_body_is_cut_off_at_the_limit(small: Any, api: BackendClient) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(100):
            yield b" " * 512

    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=small), base_url="http://b") as http:
        response = await http.post(
            "/sessions", content=chunks(), headers={**api.headers(), "Content-Type": "application/json"}
        )
    assert response.status_code == 413


async def test_an_artifact_over_the_size_limit_is_file_too_large(small: Any, api: BackendClient) -> None:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=small), base_url="http://b") as http:
        created = (await http.post("/sessions", json=session_body([PROJECT]), headers=api.headers())).json()
        ws, sess = created["workspaceId"], created["sessionId"]
        just_fits = await http.post(
            f"/workspaces/{ws}/artifacts", json=upload_body(ws, sess, b"x" * 4096), headers=api.headers()
        )
        too_big = await http.post(
            f"/workspaces/{ws}/artifacts", json=upload_body(ws, sess, b"x" * 4097), headers=api.headers()
        )
        way_too_big = await http.post(
            f"/workspaces/{ws}/artifacts", json=upload_body(ws, sess, b"x" * 10_000), headers=api.headers()
        )
    assert just_fits.status_code == 201
    for response in (too_big, way_too_big):
        assert response.status_code == 413
        assert _shape(response).code is ErrorCode.FILE_TOO_LARGE


async def test_an_unknown_route_and_a_wrong_method_answer_in_the_error_shape(api: BackendClient) -> None:
    missing = await api.call("GET", "/no/such/route")
    assert (missing.status_code, _shape(missing).code) == (404, ErrorCode.INVALID_REQUEST)
    wrong = await api.call("DELETE", "/sessions")
    assert (wrong.status_code, _shape(wrong).code) == (405, ErrorCode.INVALID_REQUEST)
    assert "POST" in wrong.headers["allow"]


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("/sessions?workspaceId=ws&limit=lots", "limit"),
        ("/sessions?workspaceId=ws&limit=0", "limit"),
        ("/sessions", "workspaceId"),
        ("/sessions/" + "s" * 200, "session_id"),
    ],
)
async def test_bad_path_or_query_parameters_are_invalid_request_naming_them(
    api: BackendClient, path: str, field: str
) -> None:
    response = await api.call("GET", path)
    assert response.status_code == 400
    assert _shape(response).details["field"] == field


class _Exploding:
    """A session store that fails the way a bug would."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def create(self, record: SessionRecord) -> None:
        raise self.error

    def get(self, tenant_id: str, session_id: str) -> SessionRecord | None:
        raise self.error

    def ownership(self, tenant_id: str, session_id: str) -> None:
        raise self.error

    def replace(self, record: SessionRecord, expected_revision: int) -> bool:
        raise self.error

    def list_by_workspace(self, tenant_id: str, workspace_id: str, limit: int) -> list[SessionRecord]:
        raise self.error


def _stores_with(error: Exception) -> Any:
    import dataclasses

    return dataclasses.replace(open_memory_stores(), sessions=_Exploding(error))


async def test_a_bug_is_internal_error_and_leaks_nothing(make_app: AppFactory, api: BackendClient) -> None:
    app = make_app(stores=_stores_with(RuntimeError("password=hunter2 at /srv/secret.py")))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://b") as http:
        response = await http.post("/sessions", json=session_body([PROJECT]), headers=api.headers())
    assert response.status_code == 500
    shape = _shape(response)
    assert shape.code is ErrorCode.INTERNAL_ERROR
    for leak in ("hunter2", "secret", "RuntimeError", "Traceback"):
        assert leak not in response.text


async def test_a_storage_failure_is_retryable_service_unavailable(
    make_app: AppFactory, api: BackendClient
) -> None:
    app = make_app(stores=_stores_with(StorageError("the local database failed")))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://b") as http:
        response = await http.get("/sessions/sess_1", headers=api.headers())
    assert response.status_code == 503
    assert _shape(response).retryable is True
    assert response.headers["retry-after"] == "1"
