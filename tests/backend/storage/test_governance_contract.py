"""The contract suite's part for governance, on memory, local and AWS (moto) stores alike: the audit
read side's queries (filters, order, positions, tenants apart), usage counters and a user's active
sessions (quotas). Each test uses its own tenant."""

from __future__ import annotations

import dataclasses
import uuid
from datetime import timedelta
from typing import Any

import pytest

from backend.audit.chain import AuditRecord, verify_chain
from backend.audit.repository import AppendResult, AuditFilter, AuditPage, Entry
from backend.common.usage import STORAGE_COUNTER, token_counter
from backend.storage import Stores
from contracts.enums import SessionStatus
from tests.backend.storage.test_repository_contract import T0, _session, _threads

# (workspace, session, user, type, minutes after T0) of the chain every query test reads.
EVENTS = [
    ("ws_a", "sess_1", "alice", "session_started", 0),
    ("ws_a", "sess_1", "alice", "tool_completed", 1),
    ("ws_b", "sess_2", "bob", "tool_completed", 2),
    ("ws_a", "sess_1", "alice", "approval_requested", 3),
    ("ws_b", "sess_2", "bob", "approval_resolved", 4),
    ("ws_a", "sess_3", "alice", "tool_completed", 5),
    ("ws_b", "sess_2", "bob", "session_completed", 6),
]


def _chain(stores: Stores, tenant: str, events: list[tuple[str, str, str, str, int]] = EVENTS) -> None:
    previous: AuditRecord | None = stores.audit.head(tenant)
    for workspace, session, user, kind, minute in events:
        event: dict[str, Any] = {
            "eventId": f"evt_{uuid.uuid4().hex}",
            "eventType": kind,
            "timestamp": (T0 + timedelta(minutes=minute)).isoformat().replace("+00:00", "Z"),
            "tenantId": tenant,
            "userId": user,
            "workspaceId": workspace,
            "sessionId": session,
            "component": "LocalAgentHost",
            "boundedContext": "AgentExecution",
            "severity": "info",
            "payload": {},
        }
        record = AuditRecord.next(tenant, previous, event["eventId"], T0, event)
        assert stores.audit.append(record) is AppendResult.APPENDED
        previous = record


def _sequences(page: AuditPage) -> list[int]:
    return [record.sequence for record in page.records]


def _query(stores: Stores, tenant: str, where: AuditFilter, **options: Any) -> AuditPage:
    options = {"position": None, "descending": False, "limit": 50, **options}
    return stores.audit.query(tenant, where, **options)


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        (AuditFilter(), [1, 2, 3, 4, 5, 6, 7]),
        (AuditFilter(workspace_id="ws_a"), [1, 2, 4, 6]),
        (AuditFilter(session_id="sess_2"), [3, 5, 7]),
        (AuditFilter(user_id="alice"), [1, 2, 4, 6]),
        (AuditFilter(event_types=frozenset({"tool_completed"})), [2, 3, 6]),
        (AuditFilter(event_types=frozenset({"approval_requested", "approval_resolved"})), [4, 5]),
        (AuditFilter(since=T0 + timedelta(minutes=2), until=T0 + timedelta(minutes=5)), [3, 4, 5]),
        (AuditFilter(workspace_id="ws_a", event_types=frozenset({"tool_completed"})), [2, 6]),
        (AuditFilter(session_id="sess_1", user_id="bob"), []),
        (
            AuditFilter(
                user_id="bob", event_types=frozenset({"tool_completed"}), since=T0 + timedelta(minutes=1)
            ),
            [3],
        ),
        (AuditFilter(workspace_id="ws_nowhere"), []),
    ],
)
def test_the_audit_log_is_queried_by_every_filter_given(
    stores: Stores, tenant: str, where: AuditFilter, expected: list[int]
) -> None:
    _chain(stores, tenant)
    assert _sequences(_query(stores, tenant, where)) == expected
    assert _sequences(_query(stores, tenant, where, descending=True)) == expected[::-1]


def test_audit_pages_continue_from_their_position_in_either_order(stores: Stores, tenant: str) -> None:
    _chain(stores, tenant)
    where = AuditFilter(user_id="alice")
    seen: list[int] = []
    position = None
    while True:
        page = _query(stores, tenant, where, position=position, descending=True, limit=2)
        seen += _sequences(page)
        if not page.more:
            break
        position = page.last_examined
    assert seen == [6, 4, 2, 1]
    first = _query(stores, tenant, AuditFilter(), limit=3)
    assert (_sequences(first), first.more, first.last_examined) == ([1, 2, 3], True, 3)
    rest = _query(stores, tenant, AuditFilter(), position=3, limit=10)
    assert (_sequences(rest), rest.more) == ([4, 5, 6, 7], False)
    assert _sequences(_query(stores, tenant, AuditFilter(), position=7)) == []
    assert _sequences(_query(stores, tenant, AuditFilter(), position=1, descending=True)) == []


def test_records_appended_later_are_found_after_the_last_position(stores: Stores, tenant: str) -> None:
    _chain(stores, tenant, EVENTS[:2])
    page = _query(stores, tenant, AuditFilter(session_id="sess_1"))
    assert (_sequences(page), page.more) == ([1, 2], False)
    _chain(stores, tenant, EVENTS[2:4])
    later = _query(stores, tenant, AuditFilter(session_id="sess_1"), position=page.last_examined)
    assert _sequences(later) == [4]


def test_an_audit_query_never_sees_another_tenants_records(stores: Stores, tenant: str) -> None:
    other = f"{tenant}x"
    _chain(stores, tenant)
    _chain(stores, other, EVENTS[:3])
    for where in (AuditFilter(), AuditFilter(session_id="sess_2"), AuditFilter(user_id="bob")):
        page = _query(stores, other, where)
        assert {record.tenant_id for record in page.records} <= {other}
        assert len(page.records) <= 3
    assert _query(stores, f"{tenant}-none", AuditFilter()).records == []


def test_records_without_envelope_fields_are_listed_and_filtered_out(stores: Stores, tenant: str) -> None:
    first = AuditRecord.next(tenant, None, "e1", T0, {"n": 1})
    stores.audit.append(first)
    stores.audit.append(
        AuditRecord.next(tenant, first, "e2", T0, {"sessionId": "sess_1", "timestamp": "nope"})
    )
    assert _sequences(_query(stores, tenant, AuditFilter())) == [1, 2]
    assert _sequences(_query(stores, tenant, AuditFilter(session_id="sess_1"))) == [2]
    assert _sequences(_query(stores, tenant, AuditFilter(since=T0))) == []


def test_a_batch_is_linked_in_order_and_each_event_once(stores: Stores, tenant: str) -> None:
    _chain(stores, tenant, EVENTS[:1])
    entries = [Entry(f"b{n}", T0, {"n": n}) for n in (1, 2, 1, 3)]
    done = stores.audit.append_many(tenant, entries)
    assert [(d.record.sequence, d.record.event_id, d.duplicate) for d in done] == [
        (2, "b1", False),
        (3, "b2", False),
        (2, "b1", True),
        (4, "b3", False),
    ]
    again = stores.audit.append_many(tenant, [Entry("b3", T0, {"n": 3}), Entry("b4", T0, {"n": 4})])
    assert [(d.record.sequence, d.duplicate) for d in again] == [(4, True), (5, False)]
    assert again[1].record.prev_hash == done[3].record.hash
    verdict = verify_chain(stores.audit.records(tenant))
    assert (verdict.ok, verdict.checked) == (True, 5)
    assert stores.audit.find_event(tenant, "b2") == done[1].record


# ---------------------------------------------------------------------------------------------- usage


def test_usage_counters_add_up_per_tenant_and_counter(stores: Stores, tenant: str) -> None:
    today = token_counter(T0.date())
    assert stores.usage.get(tenant, today) == 0
    assert stores.usage.add(tenant, today, 120, expires_at=T0 + timedelta(days=36)) == 120
    assert stores.usage.add(tenant, today, 30) == 150
    assert stores.usage.add(tenant, STORAGE_COUNTER, 4096) == 4096
    assert stores.usage.add(tenant, STORAGE_COUNTER, -1000) == 3096
    assert stores.usage.get(tenant, today) == 150
    assert stores.usage.get(tenant, token_counter((T0 + timedelta(days=1)).date())) == 0
    assert stores.usage.get(f"{tenant}x", today) == 0


def test_concurrent_additions_are_never_lost(stores: Stores, tenant: str) -> None:
    def add(index: int) -> None:
        for _ in range(5):
            stores.usage.add(tenant, "tokens/2026-03-02", index + 1)

    _threads(6, add)
    assert stores.usage.get(tenant, "tokens/2026-03-02") == 5 * sum(range(1, 7))


# ---------------------------------------------------------------------------------------------- sessions


def test_a_users_active_sessions_are_those_neither_ended_nor_expired(stores: Stores, tenant: str) -> None:
    running = _session(tenant, status=SessionStatus.SESSION_RUNNING)
    created = _session(tenant, created=T0 + timedelta(hours=1))
    ended = _session(tenant, status=SessionStatus.SESSION_CANCELLED)
    expired = _session(tenant, created=T0 - timedelta(hours=9))
    bobs = _session(tenant, user_id="bob")
    for record in (running, created, ended, expired, bobs):
        stores.sessions.create(record)
    found = stores.sessions.active_for_user(tenant, "alice", T0 + timedelta(minutes=1))
    assert {r.session_id for r in found} == {running.session_id, created.session_id}
    # A resume moves the expiry; a cancel ends it.
    resumed = dataclasses.replace(running, expires_at=T0 + timedelta(hours=20), revision=2)
    assert stores.sessions.replace(resumed, 1)
    cancelled = dataclasses.replace(created, status=SessionStatus.SESSION_CANCELLED, revision=2)
    assert stores.sessions.replace(cancelled, 1)
    later = stores.sessions.active_for_user(tenant, "alice", T0 + timedelta(hours=10))
    assert [r.session_id for r in later] == [running.session_id]
    assert stores.sessions.active_for_user(f"{tenant}x", "alice", T0) == []
