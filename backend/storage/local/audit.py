"""The audit chains in SQLite: the primary key (tenant, sequence) and the unique (tenant, eventId)
make the conditional write; triggers refuse any UPDATE or DELETE. The read side's filters are columns
beside the document (workspace, session, user, event type, the event's time), each indexed in chain
order."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence

from backend.audit.chain import AuditRecord
from backend.audit.repository import Appended, AppendResult, AuditFilter, AuditPage, Entry, IndexedFields
from backend.common.ids import timestamp
from backend.storage.local.db import Database, dumps

__all__ = ["LocalAuditRepository"]

_PAGE = 500
_COLUMNS = "sequence, event_id, document"
"""What :func:`_record` reads."""


class LocalAuditRepository:
    def __init__(self, db: Database) -> None:
        self._db = db

    def head(self, tenant_id: str) -> AuditRecord | None:
        rows = self._db.query(
            f"SELECT {_COLUMNS} FROM audit WHERE tenant_id = ? ORDER BY sequence DESC LIMIT 1", (tenant_id,)
        )
        return _record(tenant_id, rows[0]) if rows else None

    def append(self, record: AuditRecord) -> AppendResult:
        with self._db.write() as connection:
            if connection.execute(
                "SELECT 1 FROM audit WHERE tenant_id = ? AND event_id = ?",
                (record.tenant_id, record.event_id),
            ).fetchone():
                return AppendResult.DUPLICATE_EVENT
            try:
                _insert(connection, record)
            except sqlite3.IntegrityError:
                return AppendResult.SEQUENCE_TAKEN
        return AppendResult.APPENDED

    def append_many(self, tenant_id: str, entries: Sequence[Entry]) -> list[Appended]:
        # One write transaction for the batch: it holds the database's write lock, so no other
        # append (of this process or another) can take the next sequence number meanwhile.
        appended: list[Appended] = []
        with self._db.write() as connection:
            rows = connection.execute(
                f"SELECT {_COLUMNS} FROM audit WHERE tenant_id = ? ORDER BY sequence DESC LIMIT 1",
                (tenant_id,),
            ).fetchall()
            head = _record(tenant_id, rows[0]) if rows else None
            for entry in entries:
                found = connection.execute(
                    f"SELECT {_COLUMNS} FROM audit WHERE tenant_id = ? AND event_id = ?",
                    (tenant_id, entry.event_id),
                ).fetchone()
                if found is not None:
                    appended.append(Appended(_record(tenant_id, found), duplicate=True))
                    continue
                head = AuditRecord.next(tenant_id, head, entry.event_id, entry.received_at, entry.event)
                _insert(connection, head)
                appended.append(Appended(head, duplicate=False))
        return appended

    def find_event(self, tenant_id: str, event_id: str) -> AuditRecord | None:
        rows = self._db.query(
            f"SELECT {_COLUMNS} FROM audit WHERE tenant_id = ? AND event_id = ?",
            (tenant_id, event_id),
        )
        return _record(tenant_id, rows[0]) if rows else None

    def records(self, tenant_id: str, after_sequence: int = 0) -> Iterator[AuditRecord]:
        while True:
            rows = self._db.query(
                f"SELECT {_COLUMNS} FROM audit WHERE tenant_id = ? AND sequence > ?"
                " ORDER BY sequence LIMIT ?",
                (tenant_id, after_sequence, _PAGE),
            )
            for row in rows:
                yield _record(tenant_id, row)
            if len(rows) < _PAGE:
                return
            after_sequence = rows[-1][0]

    def query(
        self, tenant_id: str, where: AuditFilter, *, position: int | None, descending: bool, limit: int
    ) -> AuditPage:
        conditions = ["tenant_id = ?"]
        params: list[object] = [tenant_id]
        for column, value in (
            ("workspace_id", where.workspace_id),
            ("session_id", where.session_id),
            ("user_id", where.user_id),
        ):
            if value is not None:
                conditions.append(f"{column} = ?")
                params.append(value)
        if where.event_types:
            types = sorted(where.event_types)
            conditions.append(f"event_type IN ({', '.join('?' * len(types))})")
            params += types
        if where.since is not None:
            conditions.append("occurred_at >= ?")
            params.append(timestamp(where.since))
        if where.until is not None:
            conditions.append("occurred_at < ?")
            params.append(timestamp(where.until))
        if position is not None:
            conditions.append("sequence < ?" if descending else "sequence > ?")
            params.append(position)
        order = "DESC" if descending else "ASC"
        rows = self._db.query(
            f"SELECT {_COLUMNS} FROM audit WHERE {' AND '.join(conditions)}"
            f" ORDER BY sequence {order} LIMIT ?",
            (*params, limit + 1),
        )
        records = [_record(tenant_id, row) for row in rows[:limit]]
        return AuditPage(records, records[-1].sequence if records else None, more=len(rows) > limit)


def _insert(connection: sqlite3.Connection, record: AuditRecord) -> None:
    fields = IndexedFields.of(record)
    connection.execute(
        "INSERT INTO audit (tenant_id, sequence, event_id, document, workspace_id, session_id,"
        " user_id, event_type, occurred_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            record.tenant_id,
            record.sequence,
            record.event_id,
            dumps(record.to_document()),
            fields.workspace_id,
            fields.session_id,
            fields.user_id,
            fields.event_type,
            fields.occurred_at,
        ),
    )


def _record(tenant_id: str, row: sqlite3.Row) -> AuditRecord:
    """A row of (sequence, event_id, document) as a record (an unreadable one if its document is not)."""
    return AuditRecord.from_stored(row[2], tenant_id, row[0], row[1])
