"""The Audit Service (seed 001 §6.3): append-only, hash-chained per tenant, idempotent on eventId, and
verifiable — any change to a stored record is found at the exact record."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import httpx
import pytest

from backend.audit.chain import GENESIS, AuditRecord, verify_chain
from backend.audit.service import AuditService
from backend.storage import Stores
from backend.storage.local import DATABASE_FILE, open_local_stores
from contracts.errors import ErrorCode
from tests.backend.conftest import AppFactory
from tests.backend.helpers import BackendClient, ManualClock, envelope


async def test_events_are_chained_in_the_order_received(api: BackendClient, stores: Stores) -> None:
    single = await api.call("POST", "/audit/events", json=envelope("acme", "alice", eventId="evt_1"))
    assert single.status_code == 201
    batch = await api.call(
        "POST", "/audit/events", json=[envelope("acme", "alice", eventId=f"evt_{i}") for i in (2, 3)]
    )
    receipts = single.json()["records"] + batch.json()["records"]
    assert [r["sequence"] for r in receipts] == [1, 2, 3]
    assert batch.json()["accepted"] == 2
    records = list(stores.audit.records("acme"))
    assert records[0].prev_hash == GENESIS
    assert [r.prev_hash for r in records[1:]] == [r.hash for r in records[:-1]]
    assert [r.hash for r in records] == [r["hash"] for r in receipts]
    assert AuditService(stores.audit, ManualClock()).verify("acme").ok


async def test_a_retried_event_keeps_its_first_place(api: BackendClient) -> None:
    first = (await api.call("POST", "/audit/events", json=envelope("acme", "alice", eventId="evt_x"))).json()
    again = (await api.call("POST", "/audit/events", json=envelope("acme", "alice", eventId="evt_x"))).json()
    assert again["accepted"] == 0
    assert again["records"][0] == {**first["records"][0], "duplicate": True}


async def test_each_tenant_has_its_own_chain(api: BackendClient) -> None:
    await api.call("POST", "/audit/events", json=envelope("acme", "alice"))
    other = await api.call(
        "POST", "/audit/events", json=envelope("globex", "bob"), tenant="globex", user="bob"
    )
    assert other.json()["records"][0]["sequence"] == 1


@pytest.mark.parametrize(("field", "value"), [("tenantId", "globex"), ("userId", "mallory")])
async def test_an_event_for_someone_else_is_refused(
    api: BackendClient, stores: Stores, field: str, value: str
) -> None:
    body = [envelope("acme", "alice"), {**envelope("acme", "alice"), field: value}]
    response = await api.call("POST", "/audit/events", json=body)
    assert response.status_code == 403
    assert (response.json()["code"], response.json()["details"]["field"]) == (
        ErrorCode.PERMISSION_DENIED,
        f"[1].{field}",
    )
    assert stores.audit.head("acme") is None


@pytest.mark.parametrize("method", ["PUT", "PATCH", "DELETE"])
async def test_there_is_no_way_to_change_or_remove_an_audit_record(api: BackendClient, method: str) -> None:
    for path in ("/audit/events", "/audit/events/1", "/audit/events/evt_1"):
        response = await api.call(method, path, json=envelope("acme", "alice"))
        assert response.status_code in (404, 405)
        assert response.json()["code"] == ErrorCode.INVALID_REQUEST
    assert (await api.call(method, "/audit/events")).status_code == 405


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ([], "(root)"),
        ([{"eventId": "e"}], "[0].eventType"),
        ({**envelope("acme", "alice"), "component": "Toaster"}, "component"),
        ({**envelope("acme", "alice"), "eventType": "coffee_brewed"}, "eventType"),
        ({**envelope("acme", "alice"), "timestamp": "2026-03-02"}, "timestamp"),
    ],
)
async def test_a_bad_envelope_is_refused_naming_the_field(
    api: BackendClient, body: object, field: str
) -> None:
    response = await api.call("POST", "/audit/events", json=body)
    assert response.status_code == 400
    assert response.json()["details"]["field"] == field


async def test_a_batch_is_bounded(api: BackendClient) -> None:
    too_many = [envelope("acme", "alice") for _ in range(501)]
    response = await api.call("POST", "/audit/events", json=too_many)
    assert response.status_code in (400, 413)


async def test_an_oversized_event_is_refused_naming_it(api: BackendClient) -> None:
    big = envelope("acme", "alice", payload={"blob": "x" * 70_000})
    response = await api.call("POST", "/audit/events", json=[envelope("acme", "alice"), big])
    assert response.status_code == 413
    assert response.json()["details"]["field"] == "[1]"


async def test_nan_in_a_payload_is_not_json(api: BackendClient) -> None:
    body = json.dumps(envelope("acme", "alice")).replace('"latencyMs": 12', '"latencyMs": NaN')
    response = await api.http.post(
        "/audit/events", content=body, headers={**api.headers(), "Content-Type": "application/json"}
    )
    assert response.status_code == 400


async def test_concurrent_appends_never_fork_the_chain(
    make_app: AppFactory, issuer: object, tmp_path: Path
) -> None:
    stores = open_local_stores(tmp_path)
    try:
        app = make_app(stores=stores)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://b") as http:
            api = BackendClient(http, issuer)  # type: ignore[arg-type]
            responses = await asyncio.gather(
                *(
                    api.call("POST", "/audit/events", json=[envelope("acme", "alice") for _ in range(3)])
                    for _ in range(20)
                )
            )
        assert {r.status_code for r in responses} == {201}
        sequences = sorted(rec["sequence"] for r in responses for rec in r.json()["records"])
        assert sequences == list(range(1, 61))
        assert AuditService(stores.audit, ManualClock()).verify("acme").ok
    finally:
        stores.close()


def _tamper(data_dir: Path, statement: str) -> None:
    """What someone with the database file could do: drop the append-only guards and edit."""
    with sqlite3.connect(data_dir / DATABASE_FILE) as db:
        db.execute("DROP TRIGGER audit_is_append_only_update")
        db.execute("DROP TRIGGER audit_is_append_only_delete")
        db.execute(statement)


@pytest.mark.parametrize(
    ("statement", "broken_at"),
    [
        ("UPDATE audit SET document = replace(document, 'RunCommand', 'ReadFile') WHERE sequence = 3", 3),
        ("DELETE FROM audit WHERE sequence = 2", 2),
        (
            "UPDATE audit SET document = replace(document, '\"sequence\":4', '\"sequence\":5')"
            " WHERE sequence = 4",
            4,
        ),
    ],
)
def test_tampering_with_a_stored_record_is_detected_at_that_record(
    tmp_path: Path, statement: str, broken_at: int
) -> None:
    stores = open_local_stores(tmp_path)
    service = AuditService(stores.audit, ManualClock())
    from backend.common.auth import Principal
    from contracts.events import EventEnvelope
    from contracts.validation import validate_json_value

    events = [validate_json_value(EventEnvelope, envelope("acme", "alice")) for _ in range(5)]
    service.append(Principal("acme", "alice"), events)
    assert service.verify("acme").ok
    stores.close()
    _tamper(tmp_path, statement)
    stores = open_local_stores(tmp_path)
    verdict = AuditService(stores.audit, ManualClock()).verify("acme")
    stores.close()
    assert not verdict.ok
    assert verdict.broken_at == broken_at


def test_the_database_itself_refuses_updates_and_deletes_of_audit_records(tmp_path: Path) -> None:
    open_local_stores(tmp_path).close()
    with sqlite3.connect(tmp_path / DATABASE_FILE) as db:
        db.execute(
            "INSERT INTO audit (tenant_id, sequence, event_id, document) VALUES ('acme', 1, 'evt', '{}')"
        )
        for statement in ("UPDATE audit SET document = 'x'", "DELETE FROM audit"):
            with pytest.raises(sqlite3.IntegrityError, match="append-only"):
                db.execute(statement)


def test_a_recomputed_hash_does_not_hide_an_edit_from_the_next_link() -> None:
    from datetime import UTC, datetime

    first = AuditRecord.next("acme", None, "e1", datetime(2026, 1, 1, tzinfo=UTC), {"a": 1})
    second = AuditRecord.next("acme", first, "e2", datetime(2026, 1, 1, tzinfo=UTC), {"a": 2})
    forged = AuditRecord.next("acme", None, "e1", datetime(2026, 1, 1, tzinfo=UTC), {"a": 999})
    verdict = verify_chain([forged, second])
    assert (verdict.ok, verdict.broken_at) == (False, 2)
