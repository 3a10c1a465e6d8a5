"""The local store: SQLite (``backend.sqlite3``) and artifact files (``artifacts/``) in one data
directory — the desktop's embedded default (docs/architecture/index.md). Safe under concurrent
requests and across restarts; its schema is versioned (:data:`backend.storage.local.db.MIGRATIONS`).
Artifact content up to ``inline_content_bytes`` is kept in the database with its metadata, larger
content in files."""

from __future__ import annotations

import logging
from pathlib import Path

from backend.common.keys import private_directory
from backend.storage import Stores
from backend.storage.local.approvals import LocalApprovalRepository
from backend.storage.local.audit import LocalAuditRepository
from backend.storage.local.content import FileContentStore
from backend.storage.local.db import Database
from backend.storage.local.sessions import LocalSessionRepository
from backend.storage.local.telemetry import LocalTelemetryRepository
from backend.storage.local.usage import LocalUsageRepository
from backend.storage.local.workspaces import DEFAULT_INLINE_CONTENT_LIMIT, LocalWorkspaceRepository

__all__ = ["DATABASE_FILE", "DEFAULT_INLINE_CONTENT_LIMIT", "open_local_stores"]

DATABASE_FILE = "backend.sqlite3"

logger = logging.getLogger(__name__)


def open_local_stores(
    data_dir: Path,
    *,
    inline_content_bytes: int = DEFAULT_INLINE_CONTENT_LIMIT,
    remove_interrupted_uploads: bool = False,
) -> Stores:
    """The stores in ``data_dir``. ``remove_interrupted_uploads``: the server is starting, so delete
    the temporary files uploads left when the process ended mid-write (they are never finished)."""
    private_directory(data_dir)
    db = Database(data_dir / DATABASE_FILE)
    content = FileContentStore(data_dir / "artifacts")
    if remove_interrupted_uploads:
        removed = content.remove_interrupted_writes()
        if removed:
            logger.info(
                "removed %d temporary files of interrupted uploads",
                removed,
                extra={"count": removed, "directory": str(data_dir / "artifacts")},
            )
    return Stores(
        sessions=LocalSessionRepository(db),
        workspaces=LocalWorkspaceRepository(db, inline_content_limit=inline_content_bytes),
        content=content,
        approvals=LocalApprovalRepository(db),
        audit=LocalAuditRepository(db),
        telemetry=LocalTelemetryRepository(db),
        usage=LocalUsageRepository(db),
        # Queries and commits take microseconds here (WAL, no fsync per commit), less than a hop to a
        # worker thread; the routes move large artifact bytes to worker threads themselves.
        blocking=False,
        close=db.close,
    )
