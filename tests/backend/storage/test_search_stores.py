"""What each store's search does on its own: the local store's migration of data stored before the index
existed, and the AWS store's bounds (per-search scan budget, per-item size)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import secrets
import sqlite3
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from backend.common.auth import Principal
from backend.common.settings import Settings
from backend.storage import Stores
from backend.storage.aws import open_aws_stores
from backend.storage.aws import search as aws_search
from backend.storage.local import DATABASE_FILE, open_local_stores
from backend.storage.local.db import MIGRATIONS, dumps
from backend.workspace.records import ArtifactRecord, WorkspaceRecord
from backend.workspace.search import SearchDocument, history_documents, parse_query
from backend.workspace.service import WorkspaceService
from contracts.enums import ArtifactType, Role, WorkspaceScope
from tests.backend.conftest import fresh_aws_settings
from tests.backend.helpers import ManualClock, history
from tests.backend.storage.test_search_contract import _history, _put_history, _record, _workspace

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


class _NoSessions:
    def workspace_of(self, principal: Principal, session_id: str) -> str | None:
        return None


def _service(stores: Stores) -> WorkspaceService:
    return WorkspaceService(stores.workspaces, stores.content, _NoSessions(), ManualClock(), Settings())


def _old_database(path: Path) -> int:
    """A database at the schema just before the search index; the version it is at."""
    before = next(n for n, m in enumerate(MIGRATIONS) if any("search_documents" in s for s in m))
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)")
        for version, statements in enumerate(MIGRATIONS[:before], 1):
            for statement in statements:
                db.execute(statement)
            db.execute("INSERT INTO schema_migrations VALUES (?, 'then')", (version,))
    return before


def _insert_old_artifact(path: Path, record: ArtifactRecord, content: bytes | None) -> None:
    with sqlite3.connect(path) as db:
        db.execute(
            "INSERT INTO artifacts (workspace_id, artifact_id, tenant_id, session_id, task_id, artifact_type,"
            " created_at, order_key, document, content) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                record.workspace_id,
                record.artifact_id,
                record.tenant_id,
                record.session_id,
                record.task_id,
                record.artifact_type.value,
                record.created_at.isoformat(),
                record.order_key,
                dumps(record.to_document()),
                content,
            ),
        )


def test_data_stored_before_the_index_is_searchable_after_the_migration_and_backlog_pass(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    database = data_dir / DATABASE_FILE
    version = _old_database(database)
    workspace = WorkspaceRecord("ws_old", "acme", "alice", WorkspaceScope.LOCAL, ("/p",), T0, T0)
    with sqlite3.connect(database) as db:
        db.execute(
            "INSERT INTO workspaces VALUES (?, ?, ?, ?, ?)",
            ("ws_old", "acme", "alice", T0.isoformat(), dumps(workspace.to_document())),
        )
    # A session history kept in the row, and a large text artifact whose bytes are in a file.
    content = history("ws_old", "sess_old", "2026-03-02T09:00:00Z", text="the flux capacitor needs 1.21 GW")
    snapshot = _record(workspace, "sess_old", artifact_type=ArtifactType.SESSION_HISTORY, artifact_id="art_h")
    snapshot = _sized(snapshot, content, inline=True)
    _insert_old_artifact(database, snapshot, content)
    report = ("the capacitor overheated\n" + "line of a long report\n" * 20_000).encode()
    output = _sized(_record(workspace, "sess_old", artifact_id="art_report"), report, inline=False)
    _insert_old_artifact(database, output, None)

    stores = open_local_stores(data_dir)
    try:
        stores.content.put(output.content_key, report, "text/plain")
        with sqlite3.connect(database) as db:
            versions = [
                row[0] for row in db.execute("SELECT version FROM schema_migrations ORDER BY version")
            ]
        assert versions[version:] == list(range(version + 1, len(MIGRATIONS) + 1))
        assert stores.workspaces.search("acme", "ws_old", parse_query("capacitor")).hits == []

        assert _service(stores).index_backlog(batch=1) == 2
        hits = stores.workspaces.search("acme", "ws_old", parse_query("capacitor")).hits
        assert {(hit.document.kind, hit.artifact_id) for hit in hits} == {
            ("message", "art_h"),
            ("artifact", "art_report"),
        }
        assert _service(stores).index_backlog() == 0
    finally:
        stores.close()


def _sized(record: ArtifactRecord, content: bytes, *, inline: bool) -> ArtifactRecord:
    digest = hashlib.sha256(content).hexdigest()
    return dataclasses.replace(
        record,
        size_bytes=len(content),
        sha256=digest,
        content_key=f"{record.workspace_id}/{record.artifact_id}/{digest}",
        inline=inline,
    )


@pytest.fixture
def aws_stores(moto_endpoint: str, aws_credentials: None) -> Iterator[Stores]:
    stores = open_aws_stores(fresh_aws_settings(moto_endpoint))
    yield stores
    stores.close()


def test_an_aws_search_reads_newest_first_and_says_when_it_stopped(
    aws_stores: Stores, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = _workspace(aws_stores, "acme")
    for minute in range(4):
        _put_history(
            aws_stores, workspace, f"sess_{minute}", [f"needle number {minute} " + "x " * 2000], minute
        )
    full = aws_stores.workspaces.search("acme", workspace.workspace_id, parse_query("needle"))
    assert not full.truncated
    assert len(full.hits) == 4
    # A budget of about one session's documents: the newest is read, the rest is not.
    monkeypatch.setattr(aws_search, "SCAN_BUDGET_BYTES", 3_000)
    bounded = aws_stores.workspaces.search("acme", workspace.workspace_id, parse_query("needle"))
    assert bounded.truncated
    assert [hit.document.session_id for hit in bounded.hits] == ["sess_3"]


def test_an_aws_search_item_keeps_the_newest_messages_when_they_do_not_all_fit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(aws_search, "MAX_ITEM_BYTES", 4_000)
    texts = [secrets.token_hex(600) for _ in range(20)]  # random: it compresses poorly
    documents = history_documents(_history("ws_1", "sess_1", texts))
    record = _record(
        WorkspaceRecord("ws_1", "acme", "alice", WorkspaceScope.LOCAL, (), T0, T0),
        "sess_1",
        artifact_type=ArtifactType.SESSION_HISTORY,
    )
    item = aws_search.search_item(record, documents)
    kept = int(item["documentCount"]["N"])
    assert 0 < kept < len(documents)
    assert int(item["droppedCount"]["N"]) == len(documents) - kept
    assert len(item["documents"]["B"]) <= 4_000
    stored = [SearchDocument.from_document(d) for d in json.loads(zlib.decompress(item["documents"]["B"]))]
    newest = sorted(documents, key=lambda d: d.at, reverse=True)[:kept]
    assert [d.ref_id for d in stored] == [d.ref_id for d in newest]
    assert all(d.role in (Role.USER, Role.ASSISTANT) for d in stored)
    assert stored[0].at == T0 + timedelta(seconds=19)
