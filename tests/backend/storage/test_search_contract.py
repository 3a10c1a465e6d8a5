"""The workspace search index, one contract for every store (memory; local: SQLite FTS5; AWS: search
items on moto's DynamoDB): what is found, in what order, and never anything of another tenant or
workspace — whatever the query says."""

from __future__ import annotations

import dataclasses
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from backend.storage import Stores
from backend.workspace.records import ArtifactRecord, WorkspaceRecord
from backend.workspace.search import (
    PART_CHARS,
    SearchDocument,
    SearchQuery,
    artifact_documents,
    history_documents,
    parse_query,
)
from contracts.enums import ArtifactType, Role, WorkspaceScope
from contracts.messages import ConversationMessage, SessionHistory

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex}"


def _workspace(stores: Stores, tenant: str) -> WorkspaceRecord:
    record = WorkspaceRecord(_id("ws"), tenant, "alice", WorkspaceScope.LOCAL, ("/home/p",), T0, T0)
    return stores.workspaces.touch_or_create(record)


def _record(
    workspace: WorkspaceRecord,
    session_id: str,
    *,
    artifact_type: ArtifactType = ArtifactType.TOOL_OUTPUT,
    minute: int = 0,
    name: str = "out.txt",
    artifact_id: str | None = None,
    tenant: str | None = None,
) -> ArtifactRecord:
    artifact_id = artifact_id or _id("art")
    digest = uuid.uuid4().hex * 2
    at = T0 + timedelta(minutes=minute)
    history = artifact_type is ArtifactType.SESSION_HISTORY
    return ArtifactRecord(
        artifact_id=artifact_id,
        workspace_id=workspace.workspace_id,
        tenant_id=tenant or workspace.tenant_id,
        user_id=workspace.user_id,
        session_id=session_id,
        task_id=None if history else "task_1",
        step_id=None if history else "step_1",
        artifact_type=artifact_type,
        artifact_name="session_history.json" if history else name,
        content_type="application/json" if history else "text/plain",
        size_bytes=10,
        sha256=digest,
        content_key=f"{workspace.workspace_id}/{artifact_id}/{digest}",
        created_at=at,
        updated_at=at,
        snapshot_at=at if history else None,
    )


def _history(workspace_id: str, session_id: str, texts: list[str], minute: int = 0) -> SessionHistory:
    at = T0 + timedelta(minutes=minute)
    messages = [
        ConversationMessage(
            message_id=f"msg_{index:03d}",
            session_id=session_id,
            task_id="task_1",
            role=Role.USER if index % 2 == 0 else Role.ASSISTANT,
            content=text,
            timestamp=at + timedelta(seconds=index),
        )
        for index, text in enumerate(texts)
    ]
    return SessionHistory(
        workspace_id=workspace_id,
        session_id=session_id,
        snapshot_after_task_id="task_1",
        snapshot_at=at,
        messages=messages,
    )


def _put_history(
    stores: Stores, workspace: WorkspaceRecord, session_id: str, texts: list[str], minute: int = 0
) -> ArtifactRecord:
    record = _record(
        workspace,
        session_id,
        artifact_type=ArtifactType.SESSION_HISTORY,
        minute=minute,
        artifact_id=f"art_history_{session_id}",
    )
    documents = history_documents(_history(workspace.workspace_id, session_id, texts, minute))
    stores.workspaces.put_history(record, documents=documents)
    return record


def _put_text(
    stores: Stores, workspace: WorkspaceRecord, session_id: str, text: str, *, tenant: str | None = None
) -> ArtifactRecord:
    record = _record(workspace, session_id, tenant=tenant)
    documents = _documents_of(record, text)
    assert stores.workspaces.put_artifact(record, documents=documents) is None
    return record


def _documents_of(record: ArtifactRecord, text: str) -> list[SearchDocument]:
    return artifact_documents(
        artifact_id=record.artifact_id,
        session_id=record.session_id,
        task_id=record.task_id,
        name=record.artifact_name,
        content_type=record.content_type,
        at=record.created_at,
        data=text.encode(),
    )


def _search(stores: Stores, workspace: WorkspaceRecord, text: str, **options: object) -> list[str]:
    """The hits' references, best first: ``message:<id>`` or ``artifact:<id>``."""
    query = parse_query(text, **options)  # type: ignore[arg-type]
    page = stores.workspaces.search(workspace.tenant_id, workspace.workspace_id, query)
    return [f"{hit.document.kind}:{hit.document.ref_id}" for hit in page.hits]


def test_messages_and_text_artifacts_are_found_best_match_first(stores: Stores, tenant: str) -> None:
    workspace = _workspace(stores, tenant)
    _put_history(
        stores,
        workspace,
        "sess_a",
        [
            "Please add a database migration for the orders table",
            "I ran the tests; all green",
            "The database is Postgres 16",
        ],
    )
    output = _put_text(
        stores, workspace, "sess_b", "alembic upgrade head\nmigration 0042 applied to the orders db"
    )

    found = _search(stores, workspace, "database migration")
    assert found[0] == "message:msg_000"  # both words
    assert set(found) == {"message:msg_000", "message:msg_002", f"artifact:{output.artifact_id}"}

    page = stores.workspaces.search(tenant, workspace.workspace_id, parse_query("postgres"))
    (hit,) = page.hits
    assert hit.artifact_id == "art_history_sess_a"
    assert (hit.document.session_id, hit.document.role, hit.document.kind) == ("sess_a", Role.USER, "message")
    assert hit.document.at == T0 + timedelta(seconds=2)
    assert "**Postgres**" in hit.snippet
    assert hit.score > 0
    assert not page.truncated


def test_words_match_whatever_their_case_and_accents(stores: Stores, tenant: str) -> None:
    workspace = _workspace(stores, tenant)
    _put_history(stores, workspace, "sess_a", ["Le CAFÉ est fermé", "unrelated"])
    assert _search(stores, workspace, "cafe") == ["message:msg_000"]
    assert _search(stores, workspace, "Café FERME") == ["message:msg_000"]


def test_quoted_words_must_appear_together(stores: Stores, tenant: str) -> None:
    workspace = _workspace(stores, tenant)
    _put_history(stores, workspace, "sess_a", ["the build cache was stale", "stale data in the cache build"])
    assert _search(stores, workspace, '"build cache"') == ["message:msg_000"]


def test_a_session_filter_keeps_to_that_session(stores: Stores, tenant: str) -> None:
    workspace = _workspace(stores, tenant)
    _put_history(stores, workspace, "sess_a", ["deploy to staging"])
    _put_history(stores, workspace, "sess_b", ["deploy to production"])
    assert _search(stores, workspace, "deploy", session_id="sess_b") == ["message:msg_000"]
    page = stores.workspaces.search(
        tenant, workspace.workspace_id, parse_query("deploy", session_id="sess_b")
    )
    assert [hit.document.session_id for hit in page.hits] == ["sess_b"]
    assert _search(stores, workspace, "deploy", session_id="sess_nobody") == []


def test_the_limit_holds_and_a_long_text_is_one_hit(stores: Stores, tenant: str) -> None:
    workspace = _workspace(stores, tenant)
    long_text = ("needle in a haystack " + "filler words " * (PART_CHARS // 13)) * 3
    record = _put_text(stores, workspace, "sess_a", long_text)
    assert len(_documents_of(record, long_text)) >= 3
    assert _search(stores, workspace, "needle") == [f"artifact:{record.artifact_id}"]
    for index in range(5):
        _put_text(stores, workspace, "sess_a", f"another needle number {index}")
    assert len(_search(stores, workspace, "needle", limit=3)) == 3


@pytest.mark.parametrize(
    "query",
    [
        'needle" OR "secret',
        "NEAR(needle secret)",
        "body:needle",
        "needle*",
        "-secret needle",
        "^needle",
        "needle AND NOT secret",
        "'; DROP TABLE search_text; --",
        '"unbalanced needle',
    ],
)
def test_query_syntax_in_the_words_is_only_words(stores: Stores, tenant: str, query: str) -> None:
    workspace = _workspace(stores, tenant)
    _put_history(stores, workspace, "sess_a", ["a needle here", "nothing else"])
    other = _workspace(stores, f"{tenant}x")
    _put_history(stores, other, "sess_b", ["the secret of another tenant, and a needle"])
    found = _search(stores, workspace, query)
    assert found in ([], ["message:msg_000"])
    assert parse_query(query).terms  # every one of these has words


def test_nothing_of_another_tenant_or_workspace_is_found(stores: Stores, tenant: str) -> None:
    mine = _workspace(stores, tenant)
    theirs = _workspace(stores, f"{tenant}-other")
    my_other = _workspace(stores, tenant)
    _put_history(stores, mine, "sess_mine", ["shared keyword alpha"])
    _put_history(stores, theirs, "sess_theirs", ["shared keyword beta"])
    _put_history(stores, my_other, "sess_other", ["shared keyword gamma"])
    # A record of another tenant filed under my workspace's ID (stores key artifacts by workspace ID):
    # the tenant in the query still keeps it out.
    intruder = _put_text(stores, mine, "sess_x", "shared keyword intruder", tenant=f"{tenant}-other")

    page = stores.workspaces.search(tenant, mine.workspace_id, parse_query("shared keyword"))
    assert [hit.artifact_id for hit in page.hits] == ["art_history_sess_mine"]
    # Another tenant naming my workspace finds only its own record filed there, never mine.
    foreign = stores.workspaces.search(f"{tenant}-other", mine.workspace_id, parse_query("shared keyword"))
    assert [hit.artifact_id for hit in foreign.hits] == [intruder.artifact_id]
    # My tenant naming another tenant's workspace finds nothing.
    assert stores.workspaces.search(tenant, theirs.workspace_id, parse_query("beta")).hits == []


def test_a_newer_history_replaces_the_older_ones_documents(stores: Stores, tenant: str) -> None:
    workspace = _workspace(stores, tenant)
    _put_history(stores, workspace, "sess_a", ["first draft mentions zebra", "kept message"], minute=1)
    _put_history(
        stores, workspace, "sess_a", ["rewritten without it", "kept message", "new giraffe"], minute=2
    )
    assert _search(stores, workspace, "zebra") == []
    assert _search(stores, workspace, "giraffe") == ["message:msg_002"]
    assert _search(stores, workspace, "kept") == ["message:msg_001"]
    # An older snapshot arriving late changes nothing.
    stale = _record(
        workspace,
        "sess_a",
        artifact_type=ArtifactType.SESSION_HISTORY,
        minute=0,
        artifact_id="art_history_sess_a",
    )
    documents = history_documents(_history(workspace.workspace_id, "sess_a", ["late zebra"], minute=0))
    assert not stores.workspaces.put_history(stale, documents=documents).written
    assert _search(stores, workspace, "zebra") == []


def test_a_retried_upload_keeps_the_first_ones_documents(stores: Stores, tenant: str) -> None:
    workspace = _workspace(stores, tenant)
    record = _put_text(stores, workspace, "sess_a", "original words")
    again = dataclasses.replace(record, sha256="f" * 64)
    assert (
        stores.workspaces.put_artifact(again, documents=_documents_of(again, "different words")) is not None
    )
    assert _search(stores, workspace, "original") == [f"artifact:{record.artifact_id}"]
    assert _search(stores, workspace, "different") == []


def test_deleting_artifacts_or_the_workspace_removes_their_documents(stores: Stores, tenant: str) -> None:
    workspace = _workspace(stores, tenant)
    gone = _put_text(stores, workspace, "sess_a", "ephemeral text")
    kept = _put_text(stores, workspace, "sess_a", "ephemeral too but kept")
    stores.workspaces.delete_artifacts([gone])
    assert _search(stores, workspace, "ephemeral") == [f"artifact:{kept.artifact_id}"]
    assert stores.workspaces.delete(tenant, workspace.workspace_id) is not None
    assert _search(stores, workspace, "ephemeral") == []


def test_records_stored_without_documents_are_indexed_later(stores: Stores, tenant: str) -> None:
    workspace = _workspace(stores, tenant)
    record = _record(workspace, "sess_a")
    assert stores.workspaces.put_artifact(record) is None  # as before the index existed
    assert _search(stores, workspace, "backlog") == []
    assert record.artifact_id in {r.artifact_id for r in stores.workspaces.unindexed_artifacts(10_000)}

    stale = dataclasses.replace(record, sha256="0" * 64)
    assert not stores.workspaces.index_artifact(stale, _documents_of(stale, "backlog words"))
    assert stores.workspaces.index_artifact(record, _documents_of(record, "backlog words"))
    assert _search(stores, workspace, "backlog") == [f"artifact:{record.artifact_id}"]
    assert record.artifact_id not in {r.artifact_id for r in stores.workspaces.unindexed_artifacts(10_000)}


def test_a_query_without_words_finds_nothing(stores: Stores, tenant: str) -> None:
    workspace = _workspace(stores, tenant)
    _put_history(stores, workspace, "sess_a", ["anything"])
    empty = SearchQuery(text="!!!", terms=())
    assert stores.workspaces.search(tenant, workspace.workspace_id, empty).hits == []
