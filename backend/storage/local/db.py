"""The local store's SQLite database: WAL, a small connection pool, short write transactions and
numbered schema migrations.

SQLite allows one writer at a time; ``BEGIN IMMEDIATE`` takes the write lock at the start of a write
transaction (so two transactions never deadlock upgrading a read lock), ``busy_timeout`` makes a
writer from another process wait instead of failing, and WAL lets readers proceed while a write is in
progress. Writers of this process queue on a Python lock first: SQLite's busy handler waits by
sleeping (1, 2, 5, … up to 100 ms at a time), which under concurrent requests cost more than the
writes themselves, while a lock hands over the moment the previous transaction commits.

Durability: ``synchronous=NORMAL`` in WAL mode keeps every commit safe from a process crash at a
fraction of the cost of an fsync per commit; only a power loss (or an OS crash) can take the last
transactions, which then roll back whole. Small artifact content stored inline (migration 2, the
``content`` column of ``artifacts``) is written in the same transaction as its metadata, so it has
exactly the metadata's durability and rolls back together with it. Larger content lives in files
that are fsynced before their metadata is written (:mod:`backend.storage.local.content`); after a
power loss such a file may outlive its metadata, and the orphan sweep removes it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic_core import from_json, to_json

from backend.common.errors import StorageError

__all__ = ["MIGRATIONS", "Database", "dumps", "loads"]

logger = logging.getLogger(__name__)

MIGRATIONS: Sequence[Sequence[str]] = (
    (
        """CREATE TABLE sessions (
            session_id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, workspace_id TEXT NOT NULL,
            created_at TEXT NOT NULL, revision INTEGER NOT NULL, document TEXT NOT NULL)""",
        "CREATE INDEX sessions_by_workspace ON sessions (workspace_id, created_at)",
        """CREATE TABLE workspaces (
            workspace_id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, user_id TEXT NOT NULL,
            last_active_at TEXT NOT NULL, document TEXT NOT NULL)""",
        "CREATE INDEX workspaces_by_owner ON workspaces (tenant_id, user_id, last_active_at)",
        "CREATE INDEX workspaces_by_activity ON workspaces (last_active_at)",
        """CREATE TABLE artifacts (
            workspace_id TEXT NOT NULL, artifact_id TEXT NOT NULL, tenant_id TEXT NOT NULL,
            session_id TEXT NOT NULL, task_id TEXT, artifact_type TEXT NOT NULL,
            created_at TEXT NOT NULL, order_key TEXT NOT NULL, document TEXT NOT NULL,
            PRIMARY KEY (workspace_id, artifact_id))""",
        """CREATE TABLE approvals (
            session_id TEXT NOT NULL, approval_id TEXT NOT NULL, tenant_id TEXT NOT NULL,
            decided_at TEXT NOT NULL, document TEXT NOT NULL, PRIMARY KEY (session_id, approval_id))""",
        """CREATE TABLE audit (
            tenant_id TEXT NOT NULL, sequence INTEGER NOT NULL, event_id TEXT NOT NULL,
            document TEXT NOT NULL, PRIMARY KEY (tenant_id, sequence), UNIQUE (tenant_id, event_id))""",
        # Append-only in the database itself, not only by the absence of a route.
        """CREATE TRIGGER audit_is_append_only_update BEFORE UPDATE ON audit
            BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END""",
        """CREATE TRIGGER audit_is_append_only_delete BEFORE DELETE ON audit
            BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END""",
        """CREATE TABLE telemetry (
            tenant_id TEXT NOT NULL, event_id TEXT NOT NULL, received_at TEXT NOT NULL,
            document TEXT NOT NULL, PRIMARY KEY (tenant_id, event_id))""",
        "CREATE INDEX telemetry_by_received ON telemetry (received_at)",
    ),
    (
        # Small artifact content, kept with its metadata (NULL: the bytes are in a file). Last in the
        # row, so reading ``document`` never touches the content's overflow pages.
        "ALTER TABLE artifacts ADD COLUMN content BLOB",
    ),
    (
        # Quotas: usage counters (backend.common.usage), and a user's active sessions found by index.
        """CREATE TABLE usage (
            tenant_id TEXT NOT NULL, counter TEXT NOT NULL, amount INTEGER NOT NULL, expires_at TEXT,
            PRIMARY KEY (tenant_id, counter))""",
        "ALTER TABLE sessions ADD COLUMN user_id TEXT",
        "ALTER TABLE sessions ADD COLUMN expires_at TEXT",
        "UPDATE sessions SET user_id = json_extract(document, '$.userId'),"
        " expires_at = json_extract(document, '$.expiresAt')",
        "CREATE INDEX sessions_by_user ON sessions (tenant_id, user_id, expires_at)",
        # The audit read side's filters, each with an index in chain order. Filling the columns of the
        # records already written is the one update the append-only guards ever let through.
        "DROP TRIGGER audit_is_append_only_update",
        "ALTER TABLE audit ADD COLUMN workspace_id TEXT",
        "ALTER TABLE audit ADD COLUMN session_id TEXT",
        "ALTER TABLE audit ADD COLUMN user_id TEXT",
        "ALTER TABLE audit ADD COLUMN event_type TEXT",
        "ALTER TABLE audit ADD COLUMN occurred_at TEXT",
        "UPDATE audit SET workspace_id = json_extract(document, '$.event.workspaceId'),"
        " session_id = json_extract(document, '$.event.sessionId'),"
        " user_id = json_extract(document, '$.event.userId'),"
        " event_type = json_extract(document, '$.event.eventType'),"
        " occurred_at = strftime('%Y-%m-%dT%H:%M:%f', json_extract(document, '$.event.timestamp')) || '000Z'",
        """CREATE TRIGGER audit_is_append_only_update BEFORE UPDATE ON audit
            BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END""",
        "CREATE INDEX audit_by_workspace ON audit (tenant_id, workspace_id, sequence)",
        "CREATE INDEX audit_by_session ON audit (tenant_id, session_id, sequence)",
        "CREATE INDEX audit_by_user ON audit (tenant_id, user_id, sequence)",
        "CREATE INDEX audit_by_type ON audit (tenant_id, event_type, sequence)",
    ),
    (
        # The workspace search index (backend.storage.local.search): documents' metadata here, their
        # text in an FTS5 table under the same rowid. Artifacts stored before it are marked unindexed
        # (0), and the service's backlog pass indexes them at the next start.
        """CREATE TABLE search_documents (
            id INTEGER PRIMARY KEY, tenant_id TEXT NOT NULL, workspace_id TEXT NOT NULL,
            artifact_id TEXT NOT NULL, session_id TEXT NOT NULL, doc_key TEXT NOT NULL,
            text_hash TEXT NOT NULL, document TEXT NOT NULL)""",
        "CREATE INDEX search_documents_by_artifact ON search_documents (workspace_id, artifact_id)",
        "CREATE VIRTUAL TABLE search_text USING fts5(body, tokenize = 'unicode61 remove_diacritics 2')",
        "ALTER TABLE artifacts ADD COLUMN search_indexed INTEGER NOT NULL DEFAULT 0",
        "CREATE INDEX artifacts_unindexed ON artifacts (search_indexed) WHERE search_indexed = 0",
    ),
)
"""Schema versions, in order: migration N brings the schema from version N-1 to N."""

_CATCH_UP_PASSES = 8
_SHORT_PASS = 0.005
"""A checkpoint pass this short (seconds) left little for the last pass, which holds writers back."""


def dumps(document: Any) -> str:
    """Compact JSON text with non-ASCII characters as they are; what ``json.dumps`` with those options
    writes (NaN and infinities included), several times faster: every stored record passes here."""
    return to_json(document).decode("utf-8")


def loads(text: str) -> Any:
    return from_json(text)


class Database:
    """The database file, a pool of connections and a checkpointer thread.

    The pool holds as many connections as were ever in use at once (at most one per worker thread
    plus the event loop's); a connection is used by one thread at a time, which is what sqlite3 needs.
    """

    def __init__(
        self,
        path: Path,
        *,
        busy_timeout_ms: int = 10_000,
        checkpoint_every: float = 0.25,
        restart_wal_bytes: int = 16 * 1024 * 1024,
    ) -> None:
        self.path = path
        self._busy_timeout_ms = busy_timeout_ms
        self._restart_wal_bytes = restart_wal_bytes
        self._idle: queue.SimpleQueue[sqlite3.Connection] = queue.SimpleQueue()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._writer = threading.Lock()
        # Writers pass through this turnstile before taking the write lock; the WAL restart holds it
        # while it waits for the writer in progress, so a steady stream of writers (which would
        # re-take the unfair write lock again and again) cannot starve the restart.
        self._turnstile = threading.Lock()
        self._closed = threading.Event()
        path.parent.mkdir(parents=True, exist_ok=True)
        with self.connection() as connection:
            connection.execute("PRAGMA journal_mode=WAL")
        self.migrate()
        # A descriptor of the database file, only ever fsynced (see _checkpoint), open as long as the
        # database is: closing any descriptor of a file drops every POSIX lock this process holds on
        # it, SQLite's included, so it is closed only after SQLite's connections. Windows syncs only
        # through a handle open for writing, which this never wants; there the last pass syncs alone.
        self._file: int | None = None if os.name == "nt" else os.open(path, os.O_RDONLY)
        # Copying the WAL back into the database (a checkpoint) fsyncs; left to SQLite it happens in
        # whichever commit crosses 1000 pages, stalling that request. A thread of its own does it,
        # four times a second: under a stream of 64 KiB uploads a checkpoint a second copied ~60 MB
        # at once and the requests around it slowed (upload p99 87 ms); a quarter of it at a time,
        # 75 ms, with the same throughput.
        self._checkpointer = threading.Thread(
            target=self._checkpoint_periodically, args=(checkpoint_every,), name="sqlite-wal", daemon=True
        )
        self._checkpointer.start()

    def _connect(self) -> sqlite3.Connection:
        if self._closed.is_set():
            raise StorageError("the local database is closed")
        # check_same_thread is off because pooled connections move between threads (one at a time).
        connection = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        connection.execute(f"PRAGMA busy_timeout={self._busy_timeout_ms}")
        connection.execute("PRAGMA synchronous=NORMAL")
        connection.execute("PRAGMA wal_autocheckpoint=0")
        # When the log restarts after a long burst, its file is cut back to this size rather than kept
        # (not to less: cutting tens of MB off a file is itself a stall of milliseconds).
        connection.execute(f"PRAGMA journal_size_limit={4 * self._restart_wal_bytes}")
        connection.row_factory = sqlite3.Row
        with self._lock:
            self._all.append(connection)
        return connection

    @contextlib.contextmanager
    def connection(self) -> Iterator[sqlite3.Connection]:
        """A connection of the pool, for this thread alone until released; sqlite3 errors leave as
        StorageError."""
        try:
            try:
                connection = self._idle.get_nowait()
            except queue.Empty:
                connection = self._connect()
            try:
                yield connection
            finally:
                self._idle.put(connection)
        except sqlite3.Error as exc:
            logger.exception("local database error")
            raise StorageError("the local database failed") from exc

    @contextlib.contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, taken with the write lock up front; rolled back on any error."""
        self._take_writer()
        try:
            with self.connection() as connection:
                connection.execute("BEGIN IMMEDIATE")
                try:
                    yield connection
                except BaseException:
                    # SQLite may already have rolled back on its own (disk full, I/O error).
                    with contextlib.suppress(sqlite3.Error):
                        connection.execute("ROLLBACK")
                    raise
                connection.execute("COMMIT")
        finally:
            self._writer.release()

    def write_one(self, sql: str, params: Sequence[Any] = ()) -> tuple[int, list[sqlite3.Row]]:
        """One statement as its own transaction: rows changed and rows returned (``RETURNING``).

        A single statement is atomic without ``BEGIN``/``COMMIT``; one call instead of three is one
        trip through the GIL while this process's write lock is held, which under load is what the
        other writers wait for.
        """
        self._take_writer()
        try:
            with self.connection() as connection:
                cursor = connection.execute(sql, params)
                rows = cursor.fetchall()
                return cursor.rowcount, rows
        finally:
            self._writer.release()

    def _take_writer(self) -> None:
        if not self._turnstile.acquire(timeout=30):
            raise StorageError("the local database is busy")
        self._turnstile.release()
        if not self._writer.acquire(timeout=30):
            raise StorageError("the local database is busy")

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self.connection() as connection:
            return connection.execute(sql, params).fetchall()

    def migrate(self) -> int:
        """Bring the schema to the latest version; the version it is at afterwards."""
        with self.write() as connection:
            connection.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations"
                " (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"
            )
            current = connection.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()
            current = current[0]
            if current > len(MIGRATIONS):
                raise StorageError(f"the database's schema version {current} is newer than this program's")
            for version in range(current + 1, len(MIGRATIONS) + 1):
                for statement in MIGRATIONS[version - 1]:
                    connection.execute(statement)
                connection.execute(
                    "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)",
                    (version, datetime.now(UTC).isoformat()),
                )
            return len(MIGRATIONS)

    def _checkpoint_periodically(self, every: float) -> None:
        connection = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            # Short: this connection never makes a request wait for it (see _checkpoint).
            connection.execute("PRAGMA busy_timeout=100")
            page_size = connection.execute("PRAGMA page_size").fetchone()[0]
            # Waiting on the event is the timer: it returns at once when close() sets it.
            while not self._closed.wait(every):
                try:
                    self._checkpoint(connection, page_size)
                except sqlite3.Error:
                    logger.warning("WAL checkpoint failed; retrying later", exc_info=True)
        finally:
            connection.close()

    def _checkpoint(self, connection: sqlite3.Connection, page_size: int) -> None:
        # A passive checkpoint copies what it can without making anyone wait.
        _, frames, _ = connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        if frames * page_size <= self._restart_wal_bytes:
            return
        # Under a steady stream of writes a passive checkpoint never catches up with the newest frame,
        # so the log never starts over and grows without bound (650 MB in 15 s of uploads, with
        # throughput falling by a third), and with it every read's lookup in it. A restart needs a
        # moment with no writer, so this process's writers are held back for one — kept to about
        # 2 ms by doing the slow parts first: passes that copy what was written during the one before,
        # each followed by an fsync of the database file (of tens of MB for the first), until one is
        # quick. Then, with writers held, the last few frames are copied and the next write starts the
        # log from its beginning. If another process is using the database, the restart waits no
        # longer than this connection's 100 ms busy timeout and is tried again next time.
        for _ in range(_CATCH_UP_PASSES):
            started = time.monotonic()
            self._sync_database_file()
            connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
            if time.monotonic() - started < _SHORT_PASS:
                break
        if not self._turnstile.acquire(timeout=0.1):
            return
        try:
            if not self._writer.acquire(timeout=0.1):
                return
            try:
                connection.execute("PRAGMA wal_checkpoint(RESTART)")
            finally:
                self._writer.release()
        finally:
            self._turnstile.release()

    def _sync_database_file(self) -> None:
        if self._file is not None:
            os.fsync(self._file)

    def close(self) -> None:
        with self._lock:
            if self._closed.is_set():
                return
            self._closed.set()
            connections, self._all = self._all, []
        self._checkpointer.join(timeout=10)
        for connection in connections:
            with contextlib.suppress(sqlite3.Error):
                connection.close()
        if self._file is not None:
            os.close(self._file)
            self._file = None
        # Fold the WAL into the database so the directory is one tidy file at rest.
        with contextlib.suppress(sqlite3.Error), contextlib.closing(sqlite3.connect(self.path)) as last:
            last.execute("PRAGMA wal_checkpoint(TRUNCATE)")
