"""What only the local store (SQLite + files) has: schema versions, crash leftovers, the file layout,
inline content and the write-ahead log's checkpoints."""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import os
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from backend.common.errors import StorageError
from backend.common.settings import Settings
from backend.storage.local import DATABASE_FILE, open_local_stores
from backend.storage.local.db import MIGRATIONS, Database
from backend.storage.local.workspaces import LocalWorkspaceRepository
from backend.workspace.records import ArtifactRecord
from backend.workspace.service import WorkspaceService
from contracts.enums import ArtifactType
from tests.backend.helpers import ManualClock

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def test_a_new_database_is_brought_to_the_latest_schema_once(tmp_path: Path) -> None:
    open_local_stores(tmp_path).close()
    open_local_stores(tmp_path).close()
    with sqlite3.connect(tmp_path / DATABASE_FILE) as db:
        versions = [row[0] for row in db.execute("SELECT version FROM schema_migrations")]
    assert versions == list(range(1, len(MIGRATIONS) + 1))


def test_a_database_from_a_newer_program_is_refused_not_damaged(tmp_path: Path) -> None:
    open_local_stores(tmp_path).close()
    with sqlite3.connect(tmp_path / DATABASE_FILE) as db:
        db.execute("INSERT INTO schema_migrations VALUES (?, 'later')", (len(MIGRATIONS) + 1,))
    with pytest.raises(StorageError, match="newer"):
        open_local_stores(tmp_path)


def test_closing_folds_the_write_ahead_log_into_the_database(tmp_path: Path) -> None:
    stores = open_local_stores(tmp_path)
    stores.telemetry.prune(datetime.now(UTC), 10)
    stores.close()
    wal = tmp_path / f"{DATABASE_FILE}-wal"
    assert not wal.exists() or wal.stat().st_size == 0


def test_content_lives_in_one_directory_per_workspace(tmp_path: Path) -> None:
    stores = open_local_stores(tmp_path)
    key = f"ws_a/art_b/{'c' * 64}"
    stores.content.put(key, b"data", "text/plain")
    stores.close()
    assert (tmp_path / "artifacts" / "ws_a" / f"art_b.{'c' * 64}").read_bytes() == b"data"


@pytest.mark.parametrize(
    "key", ["../escape/x/" + "a" * 64, "ws/art/short", "ws/art/" + "A" * 64, "/abs/a/" + "a" * 64]
)
def test_a_key_that_could_leave_the_content_directory_is_refused(tmp_path: Path, key: str) -> None:
    stores = open_local_stores(tmp_path)
    try:
        with pytest.raises(StorageError):
            stores.content.put(key, b"x", "text/plain")
    finally:
        stores.close()


def test_a_temporary_file_left_by_a_crash_is_swept_once_it_is_old(tmp_path: Path) -> None:
    stores = open_local_stores(tmp_path)
    folder = tmp_path / "artifacts" / "ws_crashed"
    folder.mkdir(parents=True)
    leftover = folder / ".tmp-abc123"
    leftover.write_bytes(b"half an upload")
    an_hour_ago = (datetime.now(UTC) - timedelta(hours=2)).timestamp()
    os.utime(leftover, (an_hour_ago, an_hour_ago))
    fresh = folder / ".tmp-def456"
    fresh.write_bytes(b"an upload in progress")
    service = WorkspaceService(
        stores.workspaces, stores.content, _NoSessions(), ManualClock(datetime.now(UTC)), Settings()
    )
    report = service.purge()
    stores.close()
    assert report.orphaned_content == 1
    assert not leftover.exists()
    assert fresh.exists()


class _NoSessions:
    def workspace_of(self, principal: object, session_id: str) -> str | None:
        return None


def test_a_database_from_before_inline_content_is_upgraded_and_its_files_still_serve(tmp_path: Path) -> None:
    # Schema version 1 as the previous release created it, with one artifact whose bytes are a file.
    with sqlite3.connect(tmp_path / DATABASE_FILE) as db:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)")
        for statement in MIGRATIONS[0]:
            db.execute(statement)
        db.execute("INSERT INTO schema_migrations VALUES (1, 'earlier')")
    digest = hashlib.sha256(b"from before").hexdigest()
    old = ArtifactRecord(
        "art_old",
        "ws_old",
        "t1",
        "alice",
        "sess_1",
        None,
        None,
        ArtifactType.TOOL_OUTPUT,
        "old.txt",
        "text/plain",
        11,
        digest,
        f"ws_old/art_old/{digest}",
        T0,
        T0,
    )
    document = {k: v for k, v in old.to_document().items() if k != "contentInline"}
    with sqlite3.connect(tmp_path / DATABASE_FILE) as db:
        db.execute(
            "INSERT INTO artifacts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                "ws_old",
                "art_old",
                "t1",
                "sess_1",
                None,
                "tool_output",
                "2026",
                old.order_key,
                json.dumps(document),
            ),
        )
    (tmp_path / "artifacts" / "ws_old").mkdir(parents=True)
    (tmp_path / "artifacts" / "ws_old" / f"art_old.{digest}").write_bytes(b"from before")

    stores = open_local_stores(tmp_path)
    try:
        found = stores.workspaces.get_artifact_content("t1", "ws_old", "art_old")
        assert found is not None
        record, inline = found
        assert (record, inline) == (old, None)
        content = stores.content.open(record.content_key)
        assert content is not None
        assert b"".join(content.chunks()) == b"from before"
        content.close()
    finally:
        stores.close()
    with sqlite3.connect(tmp_path / DATABASE_FILE) as db:
        versions = [row[0] for row in db.execute("SELECT version FROM schema_migrations")]
    assert versions == list(range(1, len(MIGRATIONS) + 1))


def test_the_write_ahead_log_starts_over_under_a_steady_stream_of_writes(tmp_path: Path) -> None:
    # A passive checkpoint alone never catches up with a writer that never pauses: the log would grow
    # by everything written. Writing goes on until the log has started over (it shrinks back to its
    # size limit) — how soon depends on the machine's speed — or 256 MB were written without it.
    db = Database(tmp_path / DATABASE_FILE, checkpoint_every=0.05, restart_wal_bytes=1024 * 1024)
    repository = LocalWorkspaceRepository(db)
    wal = tmp_path / f"{DATABASE_FILE}-wal"
    data = os.urandom(64 * 1024)
    sizes: list[int] = []
    try:
        for index in range(4096):
            digest = hashlib.sha256(data + index.to_bytes(4, "big")).hexdigest()
            record = ArtifactRecord(
                f"art_{index}",
                "ws_1",
                "t1",
                "alice",
                "sess_1",
                None,
                None,
                ArtifactType.TOOL_OUTPUT,
                "out.bin",
                "application/octet-stream",
                len(data),
                digest,
                f"ws_1/art_{index}/{digest}",
                T0,
                T0,
                inline=True,
            )
            assert repository.put_artifact(record, data) is None
            sizes.append(wal.stat().st_size)
            if len(sizes) > 1 and sizes[-1] < sizes[-2]:
                break
        assert repository.get_artifact_content("t1", "ws_1", "art_0") == (
            repository.get_artifact("t1", "ws_1", "art_0"),
            data,
        )
    finally:
        db.close()
    # The log file only shrinks when it starts over (cut back to its size limit).
    restarts = sum(1 for before, after in itertools.pairwise(sizes) if after < before)
    assert restarts >= 1


def test_inline_content_is_written_with_its_record_or_not_at_all(tmp_path: Path) -> None:
    stores = open_local_stores(tmp_path)
    try:
        digest = hashlib.sha256(b"first").hexdigest()
        record = ArtifactRecord(
            "art_1",
            "ws_1",
            "t1",
            "alice",
            "sess_1",
            None,
            None,
            ArtifactType.TOOL_OUTPUT,
            "a.txt",
            "text/plain",
            5,
            digest,
            f"ws_1/art_1/{digest}",
            T0,
            T0,
            inline=True,
        )
        assert stores.workspaces.put_artifact(record, b"first") is None
        # A racing upload of the same ID loses whole: the stored bytes are still the first's.
        assert stores.workspaces.put_artifact(record, b"other") == record
        assert stores.workspaces.get_artifact_content("t1", "ws_1", "art_1") == (record, b"first")
        # A write the database refuses (here: by a trigger) leaves neither record nor bytes behind.
        with sqlite3.connect(tmp_path / DATABASE_FILE) as db:
            db.execute(
                "CREATE TRIGGER no_more BEFORE INSERT ON artifacts BEGIN SELECT RAISE(ABORT, 'no'); END"
            )
        second = dataclasses.replace(record, artifact_id="art_2", content_key=f"ws_1/art_2/{digest}")
        with pytest.raises(StorageError):
            stores.workspaces.put_artifact(second, b"first")
        assert stores.workspaces.get_artifact_content("t1", "ws_1", "art_2") is None
    finally:
        stores.close()
