"""A local database from before the audit read side and quotas: its audit records and sessions are
found by the new queries once it is opened, the chain still verifies, and the log is still
append-only."""

from __future__ import annotations

import json
import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest

from backend.audit.chain import AuditRecord, verify_chain
from backend.audit.repository import AuditFilter
from backend.common.ids import timestamp
from backend.storage.local import DATABASE_FILE, open_local_stores
from backend.storage.local.db import MIGRATIONS
from tests.backend.storage.test_repository_contract import T0, _session


def _old_database(path: Path) -> None:
    """Schema version 2, as the previous release left it."""
    with sqlite3.connect(path / DATABASE_FILE) as db:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)")
        for version in (1, 2):
            for statement in MIGRATIONS[version - 1]:
                db.execute(statement)
            db.execute("INSERT INTO schema_migrations VALUES (?, 'earlier')", (version,))


def test_records_written_before_the_read_side_are_found_by_its_filters(tmp_path: Path) -> None:
    _old_database(tmp_path)
    previous = None
    records = []
    for index, (session, moment) in enumerate(
        [("sess_1", "2026-03-02T09:00:00Z"), ("sess_2", "2026-03-02T11:30:00+02:00")]
    ):
        event = {"eventType": "tool_completed", "sessionId": session, "userId": "alice", "timestamp": moment}
        record = AuditRecord.next("acme", previous, f"e{index}", T0, event)
        records.append(record)
        previous = record
    session = _session("acme")
    with sqlite3.connect(tmp_path / DATABASE_FILE) as db:
        for record in records:
            db.execute(
                "INSERT INTO audit VALUES (?, ?, ?, ?)",
                (record.tenant_id, record.sequence, record.event_id, json.dumps(record.to_document())),
            )
        db.execute(
            "INSERT INTO sessions VALUES (?, ?, ?, ?, ?, ?)",
            (
                session.session_id,
                "acme",
                session.workspace_id,
                timestamp(session.created_at),
                1,
                json.dumps(session.to_document()),
            ),
        )
    stores = open_local_stores(tmp_path)
    try:
        page = stores.audit.query(
            "acme", AuditFilter(session_id="sess_2"), position=None, descending=False, limit=10
        )
        assert [r.event_id for r in page.records] == ["e1"]
        # 11:30+02:00 is 09:30Z: the time filter compares instants, whatever zone a client wrote.
        window = AuditFilter(since=T0 + timedelta(minutes=15), until=T0 + timedelta(minutes=45))
        assert [
            r.event_id
            for r in stores.audit.query("acme", window, position=None, descending=False, limit=10).records
        ] == ["e1"]
        assert verify_chain(stores.audit.records("acme")).ok
        active = stores.sessions.active_for_user("acme", "alice", T0)
        assert [s.session_id for s in active] == [session.session_id]
    finally:
        stores.close()
    with sqlite3.connect(tmp_path / DATABASE_FILE) as db:
        for statement in ("UPDATE audit SET document = 'x'", "DELETE FROM audit"):
            with pytest.raises(sqlite3.IntegrityError, match="append-only"):
                db.execute(statement)
        versions = [row[0] for row in db.execute("SELECT version FROM schema_migrations")]
    assert versions == list(range(1, len(MIGRATIONS) + 1))
