"""Client date-times over real HTTP (seed 001 §6.5): every date-time field of every request body — found
in the served app's OpenAPI document, so a new field is fuzzed without touching this file — answers a
bad value with 400 ``INVALID_REQUEST`` naming the field, never 500; and a timestamp the server keeps
order by may not lie in the future beyond the allowed clock skew."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from backend.common.auth import TokenIssuer
from backend.common.settings import Settings
from backend.storage.local import open_local_stores
from contracts.errors import ErrorCode, ErrorShape
from contracts.messages import SessionHistory
from tests.backend.conftest import AppFactory
from tests.backend.helpers import (
    PROJECT,
    BackendClient,
    ManualClock,
    b64,
    envelope,
    history,
    history_upload,
    serving,
)

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
"""The tests' clock (``ManualClock``'s start)."""

SKEW = timedelta(minutes=5)
"""How far ahead of the server a client's clock may run (the README's stated bound)."""

# Values no date-time field may accept. The first two exist as local times but not in UTC: the instant
# is past 9999-12-31 or before 0001-01-01, where no timestamp can be stored or compared.
NOT_DATE_TIMES = [
    "9999-12-31T23:59:59-00:01",
    "0001-01-01T00:00:00+00:01",
    "9999-12-31T23:59:59-23:59",
    "0001-01-01T00:00:00+23:59",
    "9999-12-31T23:30:00-01:00",
    "2026-03-02T09:00:00",
    "10000-01-01T00:00:00Z",
    "0000-12-31T23:59:59Z",
    "-0001-01-01T00:00:00Z",
    "2026-02-30T09:00:00Z",
    "2026-03-02T24:00:01Z",
    "2026-03-02T09:00:60Z",
    "2026-03-02T09:00:00+24:00",
    "2026-03-02",
    "",
    "yesterday",
    "99999999999999999999",
    1772442000,
    1.5,
    True,
    None,
    {"at": "2026-03-02T09:00:00Z"},
    ["2026-03-02T09:00:00Z"],
]

# The extremes that do exist in UTC: stored (a field with a future bound refuses the late ones with
# 400), never a failure.
EXTREMES = [
    "0001-01-01T00:00:00Z",
    "0001-01-01T00:00:00-23:59",
    "9999-12-31T23:59:59.999999Z",
    "9999-12-31T23:59:59+23:59",
]


# ----------------------------------------------------------------------- the fields, from OpenAPI


@dataclass(frozen=True)
class DateTimeField:
    route: str
    """``POST /approvals``, or ``… session_history`` for the document inside an upload."""
    location: tuple[str | int, ...]
    """Where the value sits in the body (list indexes as ints)."""

    @property
    def wire_name(self) -> str:
        """How the error names the field: ``decidedAt``, ``[0].timestamp``,
        ``contentBase64.messages[0].timestamp``."""
        name = ""
        for part in self.location:
            name += f"[{part}]" if isinstance(part, int) else (f".{part}" if name else part)
        return name


def _date_time_locations(schema: dict[str, Any], schemas: dict[str, Any]) -> Iterator[tuple[str | int, ...]]:
    """Every place in a body described by ``schema`` that holds a date-time."""
    if "$ref" in schema:
        yield from _date_time_locations(schemas[schema["$ref"].rsplit("/", 1)[1]], schemas)
        return
    if schema.get("format") == "date-time":
        yield ()
    for variant in (*schema.get("anyOf", ()), *schema.get("oneOf", ())):
        yield from _date_time_locations(variant, schemas)
    for name, prop in schema.get("properties", {}).items():
        for inner in _date_time_locations(prop, schemas):
            yield (name, *inner)
    if "items" in schema:
        for inner in _date_time_locations(schema["items"], schemas):
            yield (0, *inner)


def request_date_time_fields(document: dict[str, Any]) -> list[DateTimeField]:
    schemas = document["components"]["schemas"]
    found: list[DateTimeField] = []
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            body = operation.get("requestBody", {}).get("content", {}).get("application/json")
            if body is None:
                continue
            for location in dict.fromkeys(_date_time_locations(body["schema"], schemas)):
                found.append(DateTimeField(f"{method.upper()} {path}", location))
    return found


# A session_history artifact carries a JSON document inside ``contentBase64``; its fields are read from
# the document's own model, as the service reads them.
HISTORY_ROUTE = "POST /workspaces/{workspace_id}/artifacts session_history"


def history_date_time_fields() -> list[DateTimeField]:
    schema = SessionHistory.model_json_schema(by_alias=True)
    return [
        DateTimeField(HISTORY_ROUTE, ("contentBase64", *location))
        for location in dict.fromkeys(_date_time_locations(schema, schema.get("$defs", {})))
    ]


# ----------------------------------------------------------------------- valid bodies to spoil


@dataclass(frozen=True)
class Context:
    workspace_id: str
    session_id: str


def _put(body: Any, location: tuple[str | int, ...], value: Any) -> Any:
    """``body`` with ``value`` at ``location`` (a list index 0 wraps a single object in a batch)."""
    if not location:
        return value
    head, rest = location[0], location[1:]
    if isinstance(head, int):
        items = body if isinstance(body, list) else [body]
        return [_put(items[0], rest, value), *items[1:]]
    return {**body, head: _put(body[head], rest, value)}


def _valid_history_document(ctx: Context) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(history(ctx.workspace_id, ctx.session_id, "2026-03-02T08:00:00Z"))
    return document


def _decision(ctx: Context, approval_id: str) -> dict[str, Any]:
    return {
        "approvalId": approval_id,
        "sessionId": ctx.session_id,
        "taskId": "task_001",
        "stepId": "step_001",
        "decision": "approved",
        "decidedAt": "2026-03-02T08:59:00Z",
    }


def _events_body(ctx: Context, location: tuple[str | int, ...]) -> Any:
    event = envelope("acme", "alice", ctx.workspace_id, ctx.session_id)
    return [event] if location and isinstance(location[0], int) else event


# Per route: the request (path and valid body) whose date-time at ``location`` the test replaces. A
# route that gains a date-time field without an entry here fails test_every_date_time_field_is_fuzzed.
VALID_REQUESTS: dict[str, Callable[[Context, tuple[str | int, ...], int], tuple[str, Any]]] = {
    "POST /approvals": lambda ctx, loc, n: ("/approvals", _decision(ctx, f"appr_{n}")),
    "POST /audit/events": lambda ctx, loc, n: ("/audit/events", _events_body(ctx, loc)),
    "POST /telemetry/events": lambda ctx, loc, n: ("/telemetry/events", _events_body(ctx, loc)),
    HISTORY_ROUTE: lambda ctx, loc, n: (
        f"/workspaces/{ctx.workspace_id}/artifacts",
        {"contentBase64": _valid_history_document(ctx)},
    ),
}


def _request(ctx: Context, field: DateTimeField, value: Any, n: int) -> tuple[str, Any]:
    path, body = VALID_REQUESTS[field.route](ctx, field.location, n)
    if field.route != HISTORY_ROUTE:
        return path, _put(body, field.location, value)
    document = _put(body, field.location, value)["contentBase64"]
    upload = history_upload(ctx.workspace_id, ctx.session_id, "2026-03-02T08:00:00Z")
    return path, {**upload, "contentBase64": b64(json.dumps(document).encode())}


# ----------------------------------------------------------------------- the served app


@dataclass
class Served:
    api: BackendClient
    ctx: Context
    fields: list[DateTimeField]


@pytest.fixture
async def served(make_app: AppFactory, issuer: TokenIssuer, tmp_path: Path) -> AsyncIterator[Served]:
    """The app on the local store (the desktop's) behind a real uvicorn on 127.0.0.1, with a session."""
    stores = open_local_stores(tmp_path / "data")
    app = make_app(stores=stores, settings=Settings())
    try:
        with serving(app) as url:
            async with httpx.AsyncClient(base_url=url, timeout=30) as http:
                api = BackendClient(http, issuer)
                session = await api.session([PROJECT])
                fields = request_date_time_fields(app.openapi()) + history_date_time_fields()
                yield Served(api, Context(session["workspaceId"], session["sessionId"]), fields)
    finally:
        stores.close()


def _error(response: httpx.Response) -> ErrorShape:
    assert response.headers["content-type"] == "application/json", response.text
    return ErrorShape.model_validate_json(response.content)


async def test_every_date_time_field_is_fuzzed(served: Served) -> None:
    names = {(field.route, field.wire_name) for field in served.fields}
    # The fields the seeds define on request bodies; more may appear (they are fuzzed too), none may
    # go missing from the document unnoticed.
    assert {
        ("POST /approvals", "decidedAt"),
        ("POST /audit/events", "timestamp"),
        ("POST /audit/events", "[0].timestamp"),
        ("POST /telemetry/events", "timestamp"),
        ("POST /telemetry/events", "[0].timestamp"),
        (HISTORY_ROUTE, "contentBase64.snapshotAt"),
        (HISTORY_ROUTE, "contentBase64.messages[0].timestamp"),
    } <= names
    assert {field.route for field in served.fields} <= set(VALID_REQUESTS)


async def test_the_valid_bodies_are_accepted(served: Served) -> None:
    """The fuzzed bodies differ from accepted ones only in the date-time, so a 400 is about it."""
    for n, field in enumerate(served.fields):
        path, body = VALID_REQUESTS[field.route](served.ctx, field.location, n)
        if field.route == HISTORY_ROUTE:
            body = history_upload(served.ctx.workspace_id, served.ctx.session_id, "2026-03-02T08:00:00Z")
        response = await served.api.call("POST", path, json=body)
        assert response.status_code in (200, 201, 202), (field, response.text)


@pytest.mark.parametrize("value", NOT_DATE_TIMES, ids=repr)
async def test_a_value_that_is_no_date_time_is_invalid_request_naming_the_field(
    served: Served, value: Any
) -> None:
    for n, field in enumerate(served.fields):
        path, body = _request(served.ctx, field, value, n)
        response = await served.api.call("POST", path, json=body)
        assert response.status_code == 400, (field, value, response.status_code, response.text)
        shape = _error(response)
        assert (shape.code, shape.retryable) == (ErrorCode.INVALID_REQUEST, False)
        assert shape.details["field"] == field.wire_name, (field, shape)
        assert field.wire_name in shape.message


@pytest.mark.parametrize("value", EXTREMES, ids=repr)
async def test_the_first_and_last_instants_are_never_a_failure(served: Served, value: str) -> None:
    for n, field in enumerate(served.fields):
        path, body = _request(served.ctx, field, value, n)
        response = await served.api.call("POST", path, json=body)
        assert response.status_code in (200, 201, 202, 400), (field, value, response.text)
        if response.status_code == 400:
            assert _error(response).details["field"] == field.wire_name


async def test_a_date_time_past_the_last_utc_instant_says_so(served: Served) -> None:
    path, body = _request(
        served.ctx, DateTimeField("POST /approvals", ("decidedAt",)), "9999-12-31T23:59:59-00:01", 0
    )
    shape = _error(await served.api.call("POST", path, json=body))
    assert shape.message == "decidedAt is not a date-time between the years 1 and 9999 in UTC"


# ----------------------------------------------------------------------- the future bound


def _at(offset: timedelta) -> str:
    return (NOW + offset).isoformat().replace("+00:00", "Z")


async def test_a_snapshot_from_the_future_is_refused_naming_the_allowed_skew(
    served: Served,
) -> None:
    api, ws, sess = served.api, served.ctx.workspace_id, served.ctx.session_id
    artifacts = f"/workspaces/{ws}/artifacts"
    far = await api.call("POST", artifacts, json=history_upload(ws, sess, "9999-12-31T23:59:59Z", "far"))
    just_past = await api.call(
        "POST", artifacts, json=history_upload(ws, sess, _at(SKEW + timedelta(seconds=1)), "ahead")
    )
    for response in (far, just_past):
        assert response.status_code == 400, response.text
        shape = _error(response)
        assert (shape.code, shape.details["field"]) == (ErrorCode.INVALID_REQUEST, "contentBase64.snapshotAt")
        assert "in the future" in shape.message
        assert "5 minutes" in shape.message
        assert shape.details["maxClockSkewSeconds"] == 300
    within = await api.call("POST", artifacts, json=history_upload(ws, sess, _at(SKEW), "within"))
    assert (within.status_code, within.json()["outcome"]) == (201, "created")


async def test_a_refused_future_snapshot_does_not_freeze_the_history(
    make_app: AppFactory, issuer: TokenIssuer, clock: ManualClock
) -> None:
    app = make_app(settings=Settings())
    with serving(app) as url:
        async with httpx.AsyncClient(base_url=url, timeout=30) as http:
            api = BackendClient(http, issuer)
            session = await api.session([PROJECT])
            ws, sess = session["workspaceId"], session["sessionId"]
            artifacts = f"/workspaces/{ws}/artifacts"
            refused = await api.call("POST", artifacts, json=history_upload(ws, sess, "2100-01-01T00:00:00Z"))
            first = await api.call("POST", artifacts, json=history_upload(ws, sess, _at(timedelta()), "one"))
            clock.advance(minutes=1)
            second = await api.call(
                "POST", artifacts, json=history_upload(ws, sess, _at(timedelta(minutes=1)), "two")
            )
    assert refused.status_code == 400
    assert [first.json()["outcome"], second.json()["outcome"]] == ["created", "replaced"]


async def test_a_decision_from_the_future_is_refused(served: Served) -> None:
    api, ctx = served.api, served.ctx
    ahead = {**_decision(ctx, "appr_ahead"), "decidedAt": _at(SKEW + timedelta(seconds=1))}
    response = await api.call("POST", "/approvals", json=ahead)
    assert response.status_code == 400
    shape = _error(response)
    assert shape.details["field"] == "decidedAt"
    assert "in the future" in shape.message
    within = {**_decision(ctx, "appr_within"), "decidedAt": _at(SKEW)}
    assert (await api.call("POST", "/approvals", json=within)).status_code == 201


async def test_event_timestamps_ahead_of_the_server_are_kept_as_sent(served: Served) -> None:
    """Telemetry and audit order and expire by the time they were received, so a client clock running
    ahead harms nothing there; its events are kept rather than lost."""
    ctx = served.ctx
    ahead = envelope("acme", "alice", ctx.workspace_id, ctx.session_id, timestamp=_at(timedelta(days=1)))
    assert (await served.api.call("POST", "/telemetry/events", json=ahead)).status_code == 202
    assert (await served.api.call("POST", "/audit/events", json=ahead)).status_code == 201
