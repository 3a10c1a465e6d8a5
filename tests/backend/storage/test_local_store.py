"""What only the local store (SQLite + files) has: schema versions, crash leftovers, the file layout."""

from __future__ import annotations

import os
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from backend.common.errors import StorageError
from backend.common.settings import Settings
from backend.storage.local import DATABASE_FILE, open_local_stores
from backend.storage.local.db import MIGRATIONS
from backend.workspace.service import WorkspaceService
from tests.backend.helpers import ManualClock


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
