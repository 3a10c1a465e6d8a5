"""The Telemetry Service (seed 001 §6.3): envelopes stored per tenant, idempotent on eventId,
bounded by age and count."""

from __future__ import annotations

from datetime import timedelta

from backend.storage import Stores
from backend.telemetry.records import TelemetryRecord
from contracts.errors import ErrorCode
from tests.backend.helpers import BackendClient, ManualClock, envelope


async def test_events_are_stored_once_each(api: BackendClient, stores: Stores) -> None:
    events = [envelope("acme", "alice", eventId=f"evt_{i}") for i in range(5)]
    first = await api.call("POST", "/telemetry/events", json=events)
    again = await api.call(
        "POST", "/telemetry/events", json=[*events[3:], envelope("acme", "alice", eventId="evt_9")]
    )
    assert (first.status_code, first.json()) == (202, {"accepted": 5})
    assert again.json() == {"accepted": 1}
    stored = stores.telemetry.list("acme")
    assert sorted(r.event_id for r in stored) == ["evt_0", "evt_1", "evt_2", "evt_3", "evt_4", "evt_9"]
    assert stored[0].event["payload"]["toolName"] == "RunCommand"


async def test_an_event_for_another_tenant_is_refused(api: BackendClient) -> None:
    response = await api.call("POST", "/telemetry/events", json=envelope("globex", "alice"))
    assert (response.status_code, response.json()["code"]) == (403, ErrorCode.PERMISSION_DENIED)


async def test_old_and_excess_telemetry_is_pruned(
    api: BackendClient, stores: Stores, clock: ManualClock
) -> None:
    repository = stores.telemetry
    for day in range(40):
        received = clock.now() + timedelta(days=day)
        repository.put_many([TelemetryRecord("acme", f"evt_{day}", received, received, {})])
    clock.advance(days=39)
    assert repository.prune(clock.now() - timedelta(days=30), max_rows=5) == 35
    assert [r.event_id for r in repository.list("acme")] == [f"evt_{day}" for day in range(39, 34, -1)]
