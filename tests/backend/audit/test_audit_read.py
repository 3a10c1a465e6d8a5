"""The operators' side of the Audit Service over HTTP: ``GET /audit/events`` (filters, pages, cursors)
and ``GET /audit/verify`` (the first broken link named), for a tenant's administrators only; and
batches that are retried without duplicating anything or breaking the chain."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from backend.common.auth import TokenIssuer
from backend.storage.local import DATABASE_FILE, open_local_stores
from contracts.errors import ErrorCode
from tests.backend.conftest import AppFactory
from tests.backend.helpers import BackendClient, envelope, serving

ADMIN = {"tenant": "acme", "user": "ops", "admin": True}
_DAY = timedelta(days=1)

# (user, workspace, session, type, timestamp) of the events most tests post, in this order.
EVENTS = [
    ("alice", "ws_a", "sess_1", "session_started", "2026-03-02T08:00:00Z"),
    ("alice", "ws_a", "sess_1", "tool_completed", "2026-03-02T08:01:00Z"),
    ("bob", "ws_b", "sess_2", "tool_completed", "2026-03-02T08:02:00Z"),
    ("alice", "ws_a", "sess_1", "approval_requested", "2026-03-02T08:03:00+01:00"),
    ("bob", "ws_b", "sess_2", "approval_resolved", "2026-03-02T08:04:00Z"),
    ("alice", "ws_a", "sess_3", "tool_completed", "2026-03-02T08:05:00Z"),
    ("bob", "ws_b", "sess_2", "session_completed", "2026-03-02T08:06:00Z"),
]


async def _post_events(api: BackendClient, start: int = 0, end: int = len(EVENTS)) -> None:
    for index, (user, workspace, session, kind, moment) in enumerate(EVENTS[start:end], start):
        body = envelope(
            "acme", user, workspace, session, eventType=kind, timestamp=moment, eventId=f"evt_{index}"
        )
        response = await api.call("POST", "/audit/events", json=body, user=user)
        assert response.status_code == 201, response.text


async def _pages(api: BackendClient, query: str) -> list[dict[str, Any]]:
    """Every page of ``query``, following nextCursor."""
    pages = []
    cursor = None
    while True:
        path = f"/audit/events?{query}" + (f"&cursor={cursor}" if cursor else "")
        response = await api.call("GET", path, **ADMIN)
        assert response.status_code == 200, response.text
        pages.append(response.json())
        cursor = pages[-1].get("nextCursor")
        if not pages[-1]["hasMore"]:
            return pages


async def test_an_administrator_pages_through_the_log_newest_first(api: BackendClient) -> None:
    await _post_events(api)
    pages = await _pages(api, "limit=3")
    assert [[e["sequence"] for e in page["events"]] for page in pages] == [[7, 6, 5], [4, 3, 2], [1]]
    assert "nextCursor" not in pages[-1]
    first = pages[-1]["events"][0]
    assert first["eventId"] == "evt_0"
    assert first["prevHash"] == "0" * 64
    assert first["event"]["eventType"] == "session_started"
    assert pages[0]["events"][0]["prevHash"] == pages[0]["events"][1]["hash"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("workspaceId=ws_a", [1, 2, 4, 6]),
        ("sessionId=sess_2", [3, 5, 7]),
        ("userId=bob", [3, 5, 7]),
        ("eventType=tool_completed", [2, 3, 6]),
        ("eventType=approval_requested&eventType=approval_resolved", [4, 5]),
        # 08:03+01:00 is 07:03Z: before the window.
        ("since=2026-03-02T08:02:00Z&until=2026-03-02T08:06:00Z", [3, 5, 6]),
        ("since=2026-03-02T09:02:00%2B01:00&until=2026-03-02T08:06:00Z", [3, 5, 6]),
        ("userId=alice&eventType=tool_completed", [2, 6]),
        ("workspaceId=ws_a&userId=bob", []),
    ],
)
async def test_filters_combine(api: BackendClient, query: str, expected: list[int]) -> None:
    await _post_events(api)
    pages = await _pages(api, f"{query}&order=asc&limit=2")
    assert [e["sequence"] for page in pages for e in page["events"]] == expected


async def test_a_cursor_in_chain_order_finds_events_that_arrive_later(api: BackendClient) -> None:
    await _post_events(api, 0, 3)
    page = (await api.call("GET", "/audit/events?order=asc&sessionId=sess_2", **ADMIN)).json()
    assert ([e["sequence"] for e in page["events"]], page["hasMore"]) == ([3], False)
    again = (
        await api.call("GET", f"/audit/events?sessionId=sess_2&cursor={page['nextCursor']}", **ADMIN)
    ).json()
    assert again["events"] == []
    await _post_events(api, 3)
    later = (
        await api.call("GET", f"/audit/events?sessionId=sess_2&cursor={again['nextCursor']}", **ADMIN)
    ).json()
    assert [e["sequence"] for e in later["events"]] == [5, 7]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("limit=0", "limit"),
        ("limit=501", "limit"),
        ("eventType=tool_completed&eventType=coffee_brewed", "eventType[1]"),
        ("since=2026-03-02T08:00:00", "since"),
        ("since=2026-03-02T09:00:00Z&until=2026-03-02T08:00:00Z", "since"),
        ("order=sideways", "order"),
        ("cursor=not-a-cursor", "cursor"),
        ("sessionId=", "sessionId"),
    ],
)
async def test_a_bad_query_is_refused_naming_the_parameter(
    api: BackendClient, query: str, field: str
) -> None:
    response = await api.call("GET", f"/audit/events?{query}", **ADMIN)
    assert response.status_code == 400, response.text
    assert (response.json()["code"], response.json()["details"]["field"]) == (
        ErrorCode.INVALID_REQUEST,
        field,
    )


async def test_a_cursor_only_continues_the_query_it_came_from(api: BackendClient) -> None:
    await _post_events(api)
    page = (await api.call("GET", "/audit/events?limit=2&userId=alice", **ADMIN)).json()
    for query in ("limit=2&userId=bob", "limit=2", "limit=2&userId=alice&order=asc"):
        response = await api.call("GET", f"/audit/events?{query}&cursor={page['nextCursor']}", **ADMIN)
        assert response.status_code == 400, query
        assert response.json()["details"]["field"] in ("cursor", "order")
    same = await api.call("GET", f"/audit/events?limit=2&userId=alice&cursor={page['nextCursor']}", **ADMIN)
    assert [e["sequence"] for e in same.json()["events"]] == [2, 1]


@pytest.mark.parametrize("path", ["/audit/events", "/audit/verify"])
async def test_only_an_administrator_reads_the_log(api: BackendClient, path: str) -> None:
    await _post_events(api, 0, 1)
    response = await api.call("GET", path, tenant="acme", user="alice")
    assert response.status_code == 403
    body = response.json()
    assert set(body) == {"code", "message", "retryable", "details"}
    assert (body["code"], body["retryable"], body["details"]["requiredScope"]) == (
        ErrorCode.PERMISSION_DENIED,
        False,
        "admin",
    )
    assert "evt_0" not in response.text
    assert (await api.call("GET", path, headers={"Authorization": "Bearer nonsense"})).status_code == 401


async def test_a_retried_batch_records_nothing_twice_and_the_chain_still_verifies(api: BackendClient) -> None:
    batch = [envelope("acme", "alice", eventId=f"evt_{i}") for i in range(5)]
    first = (await api.call("POST", "/audit/events", json=batch)).json()
    again = (await api.call("POST", "/audit/events", json=batch)).json()
    assert (first["accepted"], again["accepted"]) == (5, 0)
    assert [r["sequence"] for r in again["records"]] == [1, 2, 3, 4, 5]
    assert all(r["duplicate"] for r in again["records"])
    # A retry that overlaps a new batch: only the new events are added, after the others.
    overlap = [
        *batch[3:],
        envelope("acme", "alice", eventId="evt_5"),
        envelope("acme", "alice", eventId="evt_5"),
    ]
    mixed = (await api.call("POST", "/audit/events", json=overlap)).json()
    assert mixed["accepted"] == 1
    assert [(r["sequence"], r["duplicate"]) for r in mixed["records"]] == [
        (4, True),
        (5, True),
        (6, False),
        (6, True),
    ]
    verified = (await api.call("GET", "/audit/verify", **ADMIN)).json()
    assert (verified["ok"], verified["checked"], verified["headSequence"]) == (True, 6, 6)
    assert verified["headHash"] == mixed["records"][2]["hash"]
    listed = (await api.call("GET", "/audit/events?limit=500", **ADMIN)).json()
    assert sorted(e["eventId"] for e in listed["events"]) == [f"evt_{i}" for i in range(6)]


def _tamper(data_dir: Path, statement: str) -> None:
    """What someone with the database file could do: drop the append-only guards and edit."""
    with sqlite3.connect(data_dir / DATABASE_FILE) as db:
        db.execute("DROP TRIGGER IF EXISTS audit_is_append_only_update")
        db.execute("DROP TRIGGER IF EXISTS audit_is_append_only_delete")
        db.execute(statement)


@pytest.mark.parametrize(
    ("statement", "reason", "sequence", "event_id"),
    [
        (
            "UPDATE audit SET document = replace(document, 'RunCommand', 'ReadFile') WHERE sequence = 3",
            "hash",
            3,
            "evt_2",
        ),
        ("DELETE FROM audit WHERE sequence = 2", "missing", 2, None),
        ('UPDATE audit SET document = \'{"not": "a record"}\' WHERE sequence = 3', "unreadable", 3, "evt_2"),
        (
            'UPDATE audit SET document = replace(document, \'"prevHash":"\', \'"prevHash":"f\')'
            " WHERE sequence = 4",
            "prev_hash",
            4,
            "evt_3",
        ),
    ],
)
def test_verify_over_http_names_the_first_broken_link_after_a_stored_record_is_changed(
    make_app: AppFactory,
    issuer: TokenIssuer,
    tmp_path: Path,
    statement: str,
    reason: str,
    sequence: int,
    event_id: str | None,
) -> None:
    stores = open_local_stores(tmp_path)
    try:
        with serving(make_app(stores=stores)) as url, httpx.Client(base_url=url, timeout=10) as http:
            alice = {"Authorization": f"Bearer {issuer.mint('acme', 'alice', _DAY)}"}
            admin = {"Authorization": f"Bearer {issuer.mint('acme', 'ops', _DAY, scopes=['admin'])}"}
            batch = [envelope("acme", "alice", eventId=f"evt_{i}") for i in range(5)]
            receipts = http.post("/audit/events", json=batch, headers=alice).json()["records"]
            assert http.get("/audit/verify", headers=admin).json()["ok"] is True
            _tamper(tmp_path, statement)
            verdict = http.get("/audit/verify", headers=admin).json()
            # The log still reads, the damaged record included, as it now is.
            listed = http.get("/audit/events?order=asc", headers=admin)
            assert listed.status_code == 200
    finally:
        stores.close()
    assert (verdict["ok"], verdict["brokenAt"], verdict["checked"]) == (False, sequence, sequence - 1)
    link = verdict["brokenLink"]
    assert (link["sequence"], link["reason"], link.get("eventId")) == (sequence, reason, event_id)
    if reason == "hash":
        assert link["found"] == receipts[sequence - 1]["hash"] != link["expected"]
    if reason == "missing":
        assert (link["expected"], link["found"]) == ("2", "3")
    if reason == "prev_hash":
        assert link["expected"] == receipts[sequence - 2]["hash"]
        assert link["found"] == "f" + receipts[sequence - 2]["hash"]
    assert verdict["headHash"] == receipts[sequence - 2]["hash"]
