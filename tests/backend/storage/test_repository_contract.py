"""One contract suite for every repository interface, run against memory, local and AWS stores
(seed 001 §8: the same behaviour whatever the store). Each test uses its own tenant and IDs."""

from __future__ import annotations

import dataclasses
import threading
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from backend.approval.records import ApprovalRecord
from backend.audit.chain import AuditRecord
from backend.audit.repository import AppendResult
from backend.common.auth import Principal
from backend.common.settings import Settings
from backend.session.records import SessionRecord
from backend.storage import Stores
from backend.telemetry.records import TelemetryRecord
from backend.workspace.records import ArtifactRecord, WorkspaceRecord
from backend.workspace.service import WorkspaceService
from contracts.approvals import ApprovalDecisionRecord
from contracts.enums import ArtifactType, Capability, ExecutionEnvironment, SessionStatus, WorkspaceScope
from contracts.methods import ClientInfo
from contracts.validation import validate_json_value
from tests.backend.helpers import ManualClock

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex}"


def _session(
    tenant: str, workspace_id: str = "ws_1", created: datetime = T0, **change: object
) -> SessionRecord:
    record = SessionRecord(
        session_id=_id("sess"),
        tenant_id=tenant,
        user_id="alice",
        workspace_id=workspace_id,
        workspace_scope=WorkspaceScope.LOCAL,
        workspace_paths=("/home/alice/p",),
        execution_environment=ExecutionEnvironment.DESKTOP,
        status=SessionStatus.SESSION_CREATED,
        client_info=ClientInfo.model_validate(
            {"desktopAppVersion": "1.0", "localAgentHostVersion": "1.0", "osFamily": "Linux"}, strict=False
        ),
        supported_capabilities=(Capability.FILE_READ, Capability.LLM_CALL),
        granted_capabilities=(Capability.FILE_READ,),
        policy_bundle_version="v1",
        created_at=created,
        updated_at=created,
        expires_at=created + timedelta(hours=8),
    )
    return dataclasses.replace(record, **change)  # type: ignore[arg-type]


def _workspace(tenant: str, user: str = "alice", active: datetime = T0) -> WorkspaceRecord:
    return WorkspaceRecord(_id("ws"), tenant, user, WorkspaceScope.LOCAL, ("/home/p",), active, active)


def _artifact(workspace: WorkspaceRecord, session_id: str = "sess_1", **change: object) -> ArtifactRecord:
    artifact_id = _id("art")
    digest = uuid.uuid4().hex * 2
    record = ArtifactRecord(
        artifact_id=artifact_id,
        workspace_id=workspace.workspace_id,
        tenant_id=workspace.tenant_id,
        user_id=workspace.user_id,
        session_id=session_id,
        task_id="task_1",
        step_id="step_1",
        artifact_type=ArtifactType.TOOL_OUTPUT,
        artifact_name="out.txt",
        content_type="text/plain",
        size_bytes=3,
        sha256=digest,
        content_key=f"{workspace.workspace_id}/{artifact_id}/{digest}",
        created_at=T0,
        updated_at=T0,
    )
    return dataclasses.replace(record, **change)  # type: ignore[arg-type]


def _snapshot(base: ArtifactRecord, minute: int, digest: str | None = None) -> ArtifactRecord:
    digest = digest or uuid.uuid4().hex * 2
    return dataclasses.replace(
        base,
        artifact_type=ArtifactType.SESSION_HISTORY,
        task_id=None,
        step_id=None,
        snapshot_at=T0 + timedelta(minutes=minute),
        sha256=digest,
        content_key=f"{base.workspace_id}/{base.artifact_id}/{digest}",
        created_at=T0 + timedelta(minutes=minute),
        updated_at=T0 + timedelta(minutes=minute),
    )


def _threads(count: int, work: Callable[[int], None]) -> None:
    errors: list[BaseException] = []

    def run(index: int) -> None:
        try:
            work(index)
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors, errors


# ---------------------------------------------------------------------------------------------- sessions


def test_a_session_reads_back_as_stored_and_only_in_its_tenant(stores: Stores, tenant: str) -> None:
    record = _session(tenant, checkpoint_cursor="step_3")
    stores.sessions.create(record)
    assert stores.sessions.get(tenant, record.session_id) == record
    assert stores.sessions.get("someone-else", record.session_id) is None
    assert stores.sessions.get(tenant, "sess_missing") is None


def test_a_sessions_owner_and_workspace_are_read_alone_and_only_in_its_tenant(
    stores: Stores, tenant: str
) -> None:
    record = _session(tenant, workspace_id="ws_owned")
    stores.sessions.create(record)
    assert stores.sessions.ownership(tenant, record.session_id) == ("alice", "ws_owned")
    assert stores.sessions.ownership("someone-else", record.session_id) is None
    assert stores.sessions.ownership(tenant, "sess_missing") is None


def test_a_session_changes_only_from_the_revision_it_was_read_at(stores: Stores, tenant: str) -> None:
    record = _session(tenant)
    stores.sessions.create(record)
    running = dataclasses.replace(record, status=SessionStatus.SESSION_RUNNING, revision=2)
    assert stores.sessions.replace(running, expected_revision=1)
    stale = dataclasses.replace(record, status=SessionStatus.SESSION_CANCELLED, revision=2)
    assert not stores.sessions.replace(stale, expected_revision=1)
    foreign = dataclasses.replace(running, tenant_id="someone-else", revision=3)
    assert not stores.sessions.replace(foreign, expected_revision=2)
    assert stores.sessions.get(tenant, record.session_id) == running


def test_concurrent_changes_to_one_session_let_exactly_one_win(stores: Stores, tenant: str) -> None:
    record = _session(tenant)
    stores.sessions.create(record)
    wins: list[int] = []

    def change(index: int) -> None:
        if stores.sessions.replace(dataclasses.replace(record, revision=2, end_reason=str(index)), 1):
            wins.append(index)

    _threads(8, change)
    assert len(wins) == 1
    stored = stores.sessions.get(tenant, record.session_id)
    assert stored is not None
    assert stored.end_reason == str(wins[0])


def test_sessions_are_listed_by_workspace_newest_first(stores: Stores, tenant: str) -> None:
    workspace_id = _id("ws")
    records = [_session(tenant, workspace_id, T0 + timedelta(minutes=i)) for i in range(3)]
    for record in [*records, _session(tenant, "ws_other"), _session("someone-else", workspace_id)]:
        stores.sessions.create(record)
    listed = stores.sessions.list_by_workspace(tenant, workspace_id, limit=10)
    assert [r.session_id for r in listed] == [r.session_id for r in reversed(records)]
    assert len(stores.sessions.list_by_workspace(tenant, workspace_id, limit=2)) == 2


def test_sessions_past_their_retention_are_purged_and_a_dry_run_only_counts_them(
    open_stores: Callable[..., Stores], tenant: str
) -> None:
    stores = open_stores(fresh=True)  # the purge spans every tenant
    old = _session(tenant, created=T0 - timedelta(days=100))
    recent = _session(tenant, created=T0 - timedelta(days=10))
    for record in (old, recent):
        stores.sessions.create(record)
    cutoff = T0 - timedelta(days=90)
    if type(stores.sessions).__module__.startswith("backend.storage.aws"):
        # DynamoDB's TTL (expiry + the same retention) deletes them; the purge has nothing to do.
        assert stores.sessions.prune_expired(cutoff) == 0
        return
    assert stores.sessions.prune_expired(cutoff, dry_run=True) == 1
    assert stores.sessions.get(tenant, old.session_id) is not None
    assert stores.sessions.prune_expired(cutoff) == 1
    assert stores.sessions.get(tenant, old.session_id) is None
    assert stores.sessions.get(tenant, recent.session_id) is not None


# ---------------------------------------------------------------------------------------------- workspaces


def test_touching_a_workspace_keeps_its_creation_and_moves_its_activity(stores: Stores, tenant: str) -> None:
    first = _workspace(tenant)
    assert stores.workspaces.touch_or_create(first) == first
    later = dataclasses.replace(
        first,
        local_paths=("/home/p", "/home/q"),
        created_at=T0 + timedelta(days=1),
        last_active_at=T0 + timedelta(days=1),
    )
    touched = stores.workspaces.touch_or_create(later)
    assert (touched.created_at, touched.last_active_at) == (T0, T0 + timedelta(days=1))
    assert touched.local_paths == ("/home/p", "/home/q")
    assert stores.workspaces.get(tenant, first.workspace_id) == touched
    assert stores.workspaces.get("someone-else", first.workspace_id) is None


def test_concurrent_first_resolutions_of_one_workspace_make_one(stores: Stores, tenant: str) -> None:
    base = _workspace(tenant)
    _threads(
        8,
        lambda i: stores.workspaces.touch_or_create(
            dataclasses.replace(
                base, last_active_at=T0 + timedelta(seconds=i), created_at=T0 + timedelta(seconds=i)
            )
        ),
    )
    owned = stores.workspaces.list_for_owner(tenant, "alice")
    assert [w.workspace_id for w in owned] == [base.workspace_id]


def test_an_owners_workspaces_are_listed_most_recently_active_first(stores: Stores, tenant: str) -> None:
    older, newer = _workspace(tenant, active=T0), _workspace(tenant, active=T0 + timedelta(hours=1))
    for record in (older, newer, _workspace(tenant, "bob"), _workspace("someone-else")):
        stores.workspaces.touch_or_create(record)
    assert [w.workspace_id for w in stores.workspaces.list_for_owner(tenant, "alice")] == [
        newer.workspace_id,
        older.workspace_id,
    ]


def test_deleting_a_workspace_takes_its_artifacts_and_nothing_else(stores: Stores, tenant: str) -> None:
    workspace, other = _workspace(tenant), _workspace(tenant)
    for record in (workspace, other):
        stores.workspaces.touch_or_create(record)
    mine = [_artifact(workspace) for _ in range(3)]
    kept = _artifact(other)
    for artifact in [*mine, kept]:
        assert stores.workspaces.put_artifact(artifact) is None
    assert stores.workspaces.delete("someone-else", workspace.workspace_id) is None
    removed = stores.workspaces.delete(tenant, workspace.workspace_id)
    assert sorted(a.artifact_id for a in removed or []) == sorted(a.artifact_id for a in mine)
    assert stores.workspaces.get(tenant, workspace.workspace_id) is None
    assert stores.workspaces.list_artifacts(tenant, workspace.workspace_id) == []
    assert stores.workspaces.list_artifacts(tenant, other.workspace_id) == [kept]
    assert stores.workspaces.delete(tenant, workspace.workspace_id) is None


def test_a_purge_delete_spares_a_workspace_used_since_it_was_listed(stores: Stores, tenant: str) -> None:
    workspace = _workspace(tenant, active=T0)
    stores.workspaces.touch_or_create(workspace)
    stores.workspaces.touch_or_create(dataclasses.replace(workspace, last_active_at=T0 + timedelta(days=95)))
    assert (
        stores.workspaces.delete(tenant, workspace.workspace_id, inactive_before=T0 + timedelta(days=90))
        is None
    )
    assert stores.workspaces.get(tenant, workspace.workspace_id) is not None
    assert (
        stores.workspaces.delete(tenant, workspace.workspace_id, inactive_before=T0 + timedelta(days=96))
        == []
    )
    assert stores.workspaces.get(tenant, workspace.workspace_id) is None


# ---------------------------------------------------------------------------------------------- artifacts


def test_an_artifact_is_stored_once_and_a_second_put_returns_the_first(stores: Stores, tenant: str) -> None:
    workspace = _workspace(tenant)
    stores.workspaces.touch_or_create(workspace)
    artifact = _artifact(workspace)
    assert stores.workspaces.put_artifact(artifact) is None
    assert stores.workspaces.put_artifact(dataclasses.replace(artifact, artifact_name="other")) == artifact
    assert stores.workspaces.get_artifact(tenant, workspace.workspace_id, artifact.artifact_id) == artifact
    assert (
        stores.workspaces.get_artifact("someone-else", workspace.workspace_id, artifact.artifact_id) is None
    )
    assert stores.workspaces.find_artifact(workspace.workspace_id, artifact.artifact_id) == artifact


def test_content_is_stored_with_a_record_only_if_the_record_says_so_and_within_the_limit(
    stores: Stores, tenant: str
) -> None:
    workspace = _workspace(tenant)
    stores.workspaces.touch_or_create(workspace)
    limit = stores.workspaces.inline_content_limit
    plain = _artifact(workspace)
    with pytest.raises(ValueError, match="inline"):
        stores.workspaces.put_artifact(plain, b"abc")
    oversize = _artifact(workspace, inline=True, size_bytes=limit + 1)
    with pytest.raises(ValueError, match="inline"):
        stores.workspaces.put_artifact(oversize, b"x" * (limit + 1))
    with pytest.raises(ValueError, match="inline"):
        stores.workspaces.put_history(_snapshot(dataclasses.replace(plain, inline=True), 1), None)
    assert stores.workspaces.put_artifact(plain) is None
    assert stores.workspaces.get_artifact_content(tenant, workspace.workspace_id, plain.artifact_id) == (
        plain,
        None,
    )
    assert (
        stores.workspaces.get_artifact_content("someone-else", workspace.workspace_id, plain.artifact_id)
        is None
    )


def test_inline_content_reads_back_with_its_record_and_goes_with_it(stores: Stores, tenant: str) -> None:
    if stores.workspaces.inline_content_limit < 3:
        pytest.skip("this store keeps every artifact's bytes in its content store")
    workspace = _workspace(tenant)
    stores.workspaces.touch_or_create(workspace)
    artifact = _artifact(workspace, inline=True)
    assert stores.workspaces.put_artifact(artifact, b"abc") is None
    assert stores.workspaces.get_artifact_content(tenant, workspace.workspace_id, artifact.artifact_id) == (
        artifact,
        b"abc",
    )
    assert stores.workspaces.get_artifact(tenant, workspace.workspace_id, artifact.artifact_id) == artifact
    base = _artifact(workspace, inline=True)
    first = dataclasses.replace(_snapshot(base, 1), size_bytes=3)
    assert stores.workspaces.put_history(first, b"one").written
    newer = dataclasses.replace(_snapshot(base, 2), size_bytes=3)
    replaced = stores.workspaces.put_history(newer, b"two")
    assert replaced.replaced == first
    found = stores.workspaces.get_artifact_content(tenant, workspace.workspace_id, base.artifact_id)
    assert found == (replaced.stored, b"two")
    removed = stores.workspaces.delete(tenant, workspace.workspace_id)
    assert sorted(r.artifact_id for r in removed or []) == sorted([artifact.artifact_id, base.artifact_id])
    for artifact_id in (artifact.artifact_id, base.artifact_id):
        assert stores.workspaces.get_artifact_content(tenant, workspace.workspace_id, artifact_id) is None


def test_artifacts_are_listed_by_every_filter_given(stores: Stores, tenant: str) -> None:
    workspace = _workspace(tenant)
    stores.workspaces.touch_or_create(workspace)
    a = _artifact(workspace, "sess_a", created_at=T0)
    b = _artifact(
        workspace,
        "sess_a",
        task_id="task_2",
        artifact_type=ArtifactType.FILE_DIFF,
        created_at=T0 + timedelta(seconds=1),
    )
    c = _artifact(workspace, "sess_b", created_at=T0 + timedelta(seconds=2))
    for artifact in (a, b, c):
        stores.workspaces.put_artifact(artifact)
    listing = stores.workspaces.list_artifacts
    assert listing(tenant, workspace.workspace_id) == [a, b, c]
    assert listing(tenant, workspace.workspace_id, session_id="sess_a") == [a, b]
    assert listing(tenant, workspace.workspace_id, task_id="task_1") == [a, c]
    assert listing(tenant, workspace.workspace_id, session_id="sess_a", artifact_type="file_diff") == [b]
    assert listing("someone-else", workspace.workspace_id) == []


def test_a_history_snapshot_replaces_only_an_older_one(stores: Stores, tenant: str) -> None:
    workspace = _workspace(tenant)
    stores.workspaces.touch_or_create(workspace)
    base = _artifact(workspace)
    first = _snapshot(base, 10)
    created = stores.workspaces.put_history(first)
    assert (created.written, created.replaced, created.stored) == (True, None, first)
    newer = _snapshot(base, 20)
    replaced = stores.workspaces.put_history(newer)
    assert replaced.written
    assert replaced.replaced == first
    assert replaced.stored == dataclasses.replace(newer, created_at=first.created_at)
    for stale in (_snapshot(base, 15), newer):
        kept = stores.workspaces.put_history(stale)
        assert (kept.written, kept.stored) == (False, replaced.stored)
    assert stores.workspaces.get_artifact(tenant, workspace.workspace_id, base.artifact_id) == replaced.stored


def test_concurrent_history_snapshots_keep_the_newest(stores: Stores, tenant: str) -> None:
    workspace = _workspace(tenant)
    stores.workspaces.touch_or_create(workspace)
    base = _artifact(workspace)
    snapshots = [_snapshot(base, minute) for minute in range(12)]
    _threads(len(snapshots), lambda i: stores.workspaces.put_history(snapshots[-1 - i]))
    stored = stores.workspaces.get_artifact(tenant, workspace.workspace_id, base.artifact_id)
    assert stored is not None
    assert stored.snapshot_at == snapshots[-1].snapshot_at
    assert stored.sha256 == snapshots[-1].sha256


def test_equal_snapshot_times_are_ordered_by_content_hash(stores: Stores, tenant: str) -> None:
    workspace = _workspace(tenant)
    stores.workspaces.touch_or_create(workspace)
    base = _artifact(workspace)
    low, high = _snapshot(base, 5, "1" * 64), _snapshot(base, 5, "f" * 64)
    stores.workspaces.put_history(high)
    assert not stores.workspaces.put_history(low).written
    stored = stores.workspaces.get_artifact(tenant, workspace.workspace_id, base.artifact_id)
    assert stored is not None
    assert stored.sha256 == "f" * 64


def test_artifacts_of_a_vanished_workspace_are_found_as_orphans(stores: Stores, tenant: str) -> None:
    gone = _workspace(tenant)
    orphan = _artifact(gone)
    stores.workspaces.put_artifact(orphan)
    found = stores.workspaces.orphaned_artifacts(limit=10_000)
    assert orphan in found
    stores.workspaces.delete_artifacts([orphan])
    assert stores.workspaces.find_artifact(gone.workspace_id, orphan.artifact_id) is None


# ---------------------------------------------------------------------------------------------- content


def test_content_is_stored_read_listed_and_deleted(stores: Stores) -> None:
    workspace_id = _id("ws")
    keys = [f"{workspace_id}/{_id('art')}/{uuid.uuid4().hex * 2}" for _ in range(3)]
    payload = bytes(range(256)) * 4096
    for key in keys:
        stores.content.put(key, payload, "application/octet-stream")
    content = stores.content.open(keys[0])
    assert content is not None
    assert content.size == len(payload)
    assert b"".join(content.chunks()) == payload
    content.close()
    assert sorted(o.key for o in stores.content.list(f"{workspace_id}/")) == sorted(keys)
    stores.content.delete(keys[0])
    stores.content.delete(keys[0])
    assert stores.content.open(keys[0]) is None
    stores.content.delete_prefix(f"{workspace_id}/")
    assert list(stores.content.list(f"{workspace_id}/")) == []


# ---------------------------------------------------------------------------------------------- approvals


def _decision(session_id: str, approval_id: str, minute: int) -> ApprovalDecisionRecord:
    return validate_json_value(
        ApprovalDecisionRecord,
        {
            "approvalId": approval_id,
            "sessionId": session_id,
            "taskId": "task_1",
            "stepId": "step_1",
            "decision": "denied",
            "decidedAt": f"2026-03-02T09:{minute:02d}:00Z",
        },
    )


def test_an_approval_is_kept_once_and_listed_in_decision_order(stores: Stores, tenant: str) -> None:
    session_id = _id("sess")
    records = [
        ApprovalRecord(tenant, "alice", "ws_1", _decision(session_id, f"a{m}", m), T0) for m in (9, 3, 6)
    ]
    for record in records:
        assert stores.approvals.put_if_absent(record) is None
    assert (
        stores.approvals.put_if_absent(dataclasses.replace(records[0], recorded_at=T0 + timedelta(hours=1)))
        == records[0]
    )
    listed = stores.approvals.list_by_session(tenant, session_id)
    assert [r.approval_id for r in listed] == ["a3", "a6", "a9"]
    assert stores.approvals.list_by_session("someone-else", session_id) == []


# ---------------------------------------------------------------------------------------------- audit


def test_the_audit_chain_appends_only_the_next_sequence_and_each_event_once(
    stores: Stores, tenant: str
) -> None:
    first = AuditRecord.next(tenant, None, "e1", T0, {"n": 1})
    assert stores.audit.append(first) is AppendResult.APPENDED
    assert (
        stores.audit.append(AuditRecord.next(tenant, None, "e2", T0, {"n": 2})) is AppendResult.SEQUENCE_TAKEN
    )
    assert (
        stores.audit.append(AuditRecord.next(tenant, first, "e1", T0, {"n": 1}))
        is AppendResult.DUPLICATE_EVENT
    )
    second = AuditRecord.next(tenant, first, "e2", T0, {"n": 2, "nested": {"ok": [1.5, None, "x"]}})
    assert stores.audit.append(second) is AppendResult.APPENDED
    assert stores.audit.head(tenant) == second
    assert stores.audit.find_event(tenant, "e1") == first
    assert stores.audit.find_event("someone-else", "e1") is None
    assert list(stores.audit.records(tenant)) == [first, second]
    assert list(stores.audit.records(tenant, after_sequence=1)) == [second]


def test_concurrent_audit_appends_make_one_unbroken_chain(stores: Stores, tenant: str) -> None:
    from backend.audit.service import AuditService
    from contracts.events import EventEnvelope
    from tests.backend.helpers import envelope

    service = AuditService(stores.audit, ManualClock())
    principal = Principal(tenant, "alice")

    def append(index: int) -> None:
        events = [validate_json_value(EventEnvelope, envelope(tenant, "alice")) for _ in range(2)]
        service.append(principal, events)

    _threads(6, append)
    verdict = service.verify(tenant)
    assert (verdict.ok, verdict.checked) == (True, 12)


# ---------------------------------------------------------------------------------------------- telemetry


def test_telemetry_is_stored_once_per_event_id(stores: Stores, tenant: str) -> None:
    records = [TelemetryRecord(tenant, f"e{i}", T0, T0 + timedelta(seconds=i), {"i": i}) for i in range(4)]
    assert stores.telemetry.put_many(records[:3]) == records[:3]
    assert stores.telemetry.put_many([*records[2:], records[3]]) == [records[3]]
    assert [r.event_id for r in stores.telemetry.list(tenant)] == ["e3", "e2", "e1", "e0"]
    assert stores.telemetry.list("someone-else") == []


# ---------------------------------------------------------------------------------------------- purge


def test_purge_removes_inactive_workspaces_with_their_content_and_sweeps_orphans(
    open_stores: Callable[..., Stores], tenant: str
) -> None:
    stores = open_stores(fresh=True)
    # Content stores stamp objects with the real time, so this test's clock starts from it.
    now = datetime.now(UTC)
    service = WorkspaceService(stores.workspaces, stores.content, _NoSessions(), ManualClock(now), Settings())
    stale, active = (
        _workspace(tenant, active=now - timedelta(days=91)),
        _workspace(tenant, active=now - timedelta(days=60)),
    )
    contents = []
    for workspace in (stale, active):
        stores.workspaces.touch_or_create(workspace)
        artifact = _artifact(workspace)
        stores.content.put(artifact.content_key, b"abc", "text/plain")
        stores.workspaces.put_artifact(artifact)
        contents.append(artifact.content_key)
    stores.workspaces.put_artifact(_artifact(_workspace(tenant)))
    stray = f"{active.workspace_id}/{_id('art')}/{'0' * 64}"
    stores.content.put(stray, b"left behind by a crash", "text/plain")

    report = service.purge(now=now + Settings().orphan_grace + timedelta(minutes=1))
    assert (report.workspaces, report.artifacts, report.orphaned_artifacts, report.orphaned_content) == (
        1,
        1,
        1,
        1,
    )
    assert stores.workspaces.get(tenant, stale.workspace_id) is None
    assert stores.content.open(contents[0]) is None
    assert stores.workspaces.get(tenant, active.workspace_id) is not None
    kept = stores.content.open(contents[1])
    assert kept is not None
    kept.close()
    assert stores.content.open(stray) is None


def test_purge_leaves_content_younger_than_the_grace_period(
    open_stores: Callable[..., Stores], tenant: str
) -> None:
    stores = open_stores(fresh=True)
    in_flight = f"{_id('ws')}/{_id('art')}/{'1' * 64}"
    stores.content.put(in_flight, b"upload in progress", "text/plain")
    now = datetime.now(UTC)
    report = WorkspaceService(
        stores.workspaces, stores.content, _NoSessions(), ManualClock(now), Settings()
    ).purge()
    assert report.orphaned_content == 0
    content = stores.content.open(in_flight)
    assert content is not None
    content.close()


class _NoSessions:
    def workspace_of(self, principal: Principal, session_id: str) -> str | None:
        return None
