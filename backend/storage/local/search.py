"""The local store's workspace search index: SQLite FTS5 (schema: migration 4 in
:mod:`backend.storage.local.db`).

``search_documents`` holds each document's owner (tenant, workspace, artifact, session) and metadata;
``search_text``, an FTS5 table tokenized by ``unicode61 remove_diacritics 2``, holds its text under the
same rowid. Both are written in the transaction that writes the artifact record, so the index never
disagrees with the records. A new ``session_history`` snapshot mostly adds messages to the previous
one: documents whose key and content are unchanged are kept, only the others are deleted and inserted.

Isolation: every query joins ``search_documents`` and filters by tenant and workspace in SQL; the user's
words reach FTS5 only as quoted phrases (:meth:`SearchQuery.fts5`), never as query syntax.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence

from backend.storage.local.db import Database, dumps, loads
from backend.workspace.records import ArtifactRecord
from backend.workspace.search import SearchDocument, SearchHit, SearchPage, SearchQuery, best_per_source

__all__ = ["delete_documents", "replace_documents", "search"]

_SNIPPET = "snippet(search_text, 0, '**', '**', '…', 24)"


def _hash(document: SearchDocument) -> str:
    return hashlib.sha256(dumps(document.to_document()).encode("utf-8")).hexdigest()[:32]


def replace_documents(
    connection: sqlite3.Connection, record: ArtifactRecord, documents: Sequence[SearchDocument]
) -> None:
    """Make ``documents`` the search documents of ``record`` (inside the caller's write transaction)."""
    stored = {
        row[1]: (row[0], row[2])
        for row in connection.execute(
            "SELECT id, doc_key, text_hash FROM search_documents WHERE workspace_id = ? AND artifact_id = ?",
            (record.workspace_id, record.artifact_id),
        )
    }
    wanted = {document.key: (document, _hash(document)) for document in documents}
    stale = [row_id for key, (row_id, digest) in stored.items() if wanted.get(key, (None, ""))[1] != digest]
    if stale:
        connection.executemany("DELETE FROM search_text WHERE rowid = ?", [(row_id,) for row_id in stale])
        connection.executemany("DELETE FROM search_documents WHERE id = ?", [(row_id,) for row_id in stale])
    for key, (document, digest) in wanted.items():
        if key in stored and stored[key][1] == digest:
            continue
        cursor = connection.execute(
            "INSERT INTO search_documents (tenant_id, workspace_id, artifact_id, session_id, doc_key,"
            " text_hash, document) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                record.tenant_id,
                record.workspace_id,
                record.artifact_id,
                document.session_id,
                key,
                digest,
                dumps(document.metadata()),
            ),
        )
        connection.execute(
            "INSERT INTO search_text (rowid, body) VALUES (?, ?)", (cursor.lastrowid, document.text)
        )


def delete_documents(
    connection: sqlite3.Connection, workspace_id: str, artifact_ids: Sequence[str] | None = None
) -> None:
    """Drop the search documents of these artifacts of the workspace (None: of all of them)."""
    if artifact_ids is None:
        connection.execute(
            "DELETE FROM search_text WHERE rowid IN (SELECT id FROM search_documents WHERE workspace_id = ?)",
            (workspace_id,),
        )
        connection.execute("DELETE FROM search_documents WHERE workspace_id = ?", (workspace_id,))
        return
    for artifact_id in artifact_ids:
        connection.execute(
            "DELETE FROM search_text WHERE rowid IN"
            " (SELECT id FROM search_documents WHERE workspace_id = ? AND artifact_id = ?)",
            (workspace_id, artifact_id),
        )
        connection.execute(
            "DELETE FROM search_documents WHERE workspace_id = ? AND artifact_id = ?",
            (workspace_id, artifact_id),
        )


def search(db: Database, tenant_id: str, workspace_id: str, query: SearchQuery) -> SearchPage:
    if not query.terms:
        return SearchPage()
    sql = (
        f"SELECT d.artifact_id, d.document, {_SNIPPET}, bm25(search_text)"
        " FROM search_text JOIN search_documents AS d ON d.id = search_text.rowid"
        " WHERE search_text MATCH ? AND d.tenant_id = ? AND d.workspace_id = ?"
    )
    params: list[str | int] = [query.fts5(), tenant_id, workspace_id]
    if query.session_id is not None:
        sql += " AND d.session_id = ?"
        params.append(query.session_id)
    # Several parts of one message or artifact may match; a hit is the best of them, so more rows
    # than the limit are read to fill it.
    params.append(query.limit * 4 + 8)
    rows = db.query(sql + " ORDER BY bm25(search_text) LIMIT ?", params)
    hits = [
        SearchHit(
            document=SearchDocument.from_document(loads(row[1]), text=""),
            artifact_id=row[0],
            snippet=" ".join(row[2].split()),
            # FTS5's bm25() is negative, lower being better.
            score=max(0.0, -float(row[3])),
        )
        for row in rows
    ]
    return SearchPage(hits=best_per_source(hits)[: query.limit])
