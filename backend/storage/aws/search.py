"""The AWS store's workspace search: one compressed item of search documents per artifact, ranked in the
service (``{env}-search``).

DynamoDB has no full-text search, so this is a scan-and-rank bounded by workspace. Each artifact's
documents (:mod:`backend.workspace.search`: a session's messages, a text artifact's parts) are kept as
one item — zlib-compressed JSON, key ``scope`` = ``<tenantId>/<workspaceId>`` and ``artifactId`` —
written in the same transaction as the artifact's record (:mod:`backend.storage.aws.workspaces`), so
the two never disagree. A search is one Query of the workspace's partition through the GSI
``byRecency`` (``scope``, ``updatedAt``), newest first, ranked with BM25 by
:func:`backend.workspace.search.rank`.

The trade-off, against a token index (an item per word and document) or a search engine beside
DynamoDB (OpenSearch): no other service to run, writes cost one more item per upload, and the index is
exactly as consistent as the records. But a search reads the whole partition, so its cost grows with the
workspace: it stops after :data:`SCAN_BUDGET_BYTES` of documents (uncompressed), and older content past
that is not searched (the answer says ``truncated``). One item holds at most :data:`MAX_ITEM_BYTES`
compressed; a session whose text compresses larger keeps its newest messages searchable and drops the
oldest. Tenant isolation is in the key: a query names ``<tenant>/<workspace>`` and can read no other
partition.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Sequence
from typing import Any

from backend.common.ids import timestamp
from backend.storage.aws.calls import failing_as_storage_error, n, s
from backend.workspace.records import ArtifactRecord
from backend.workspace.search import SearchDocument, SearchPage, SearchQuery, rank

__all__ = [
    "MAX_ITEM_BYTES",
    "SCAN_BUDGET_BYTES",
    "SEARCH_INDEX",
    "scope_of",
    "search",
    "search_item",
    "search_key",
]

SEARCH_INDEX = "byRecency"
MAX_ITEM_BYTES = 350_000
"""Compressed documents per item: DynamoDB's limit is 400 KB an item, keys and attributes included."""
SCAN_BUDGET_BYTES = 16 * 1024 * 1024
"""Uncompressed documents one search reads at most (about 3-4 MB of reads, a few hundred ms)."""


def scope_of(tenant_id: str, workspace_id: str) -> str:
    # A tenant ID holds no "/", so the split point is unambiguous.
    return f"{tenant_id}/{workspace_id}"


def search_key(record: ArtifactRecord) -> dict[str, dict[str, str]]:
    return {"scope": s(scope_of(record.tenant_id, record.workspace_id)), "artifactId": s(record.artifact_id)}


def _packed(documents: Sequence[SearchDocument]) -> tuple[bytes, int]:
    """The documents as compressed JSON within :data:`MAX_ITEM_BYTES`: all of them, or the newest that
    fit; how many were kept."""
    ordered = sorted(documents, key=lambda d: d.at, reverse=True)
    keep = len(ordered)
    while True:
        kept = ordered[:keep]
        data = zlib.compress(json.dumps([d.to_document() for d in kept], ensure_ascii=False).encode(), 6)
        if len(data) <= MAX_ITEM_BYTES or keep == 0:
            return data, keep
        # Shrink in proportion to the excess, and by at least one document.
        keep = min(keep - 1, int(keep * MAX_ITEM_BYTES / len(data) * 0.95))


def search_item(record: ArtifactRecord, documents: Sequence[SearchDocument]) -> dict[str, Any]:
    data, kept = _packed(documents)
    return {
        **search_key(record),
        "sessionId": s(record.session_id),
        "orderKey": s(record.order_key),
        "createdAt": s(timestamp(record.created_at)),
        "updatedAt": s(timestamp(record.updated_at)),
        "documentCount": n(kept),
        "droppedCount": n(len(documents) - kept),
        "documents": {"B": data},
    }


def search(dynamodb: Any, table: str, tenant_id: str, workspace_id: str, query: SearchQuery) -> SearchPage:
    request: dict[str, Any] = {
        "TableName": table,
        "IndexName": SEARCH_INDEX,
        "KeyConditionExpression": "#scope = :scope",
        "ExpressionAttributeNames": {"#scope": "scope"},
        "ExpressionAttributeValues": {":scope": s(scope_of(tenant_id, workspace_id))},
        "ProjectionExpression": "artifactId, documents",
        "ScanIndexForward": False,
    }
    if query.session_id is not None:
        request["FilterExpression"] = "sessionId = :session"
        request["ExpressionAttributeValues"][":session"] = s(query.session_id)
    candidates: list[tuple[str, SearchDocument]] = []
    read = 0
    truncated = False
    with failing_as_storage_error("searching the workspace"):
        while True:
            page = dynamodb.query(**request)
            for item in page.get("Items", []):
                if read >= SCAN_BUDGET_BYTES:
                    truncated = True
                    break
                raw = zlib.decompress(item["documents"]["B"])
                read += len(raw)
                artifact_id = item["artifactId"]["S"]
                candidates.extend(
                    (artifact_id, SearchDocument.from_document(document)) for document in json.loads(raw)
                )
            last = page.get("LastEvaluatedKey")
            if truncated or not last:
                break
            if read >= SCAN_BUDGET_BYTES:
                truncated = True
                break
            request["ExclusiveStartKey"] = last
    return SearchPage(hits=rank(candidates, query), truncated=truncated)
