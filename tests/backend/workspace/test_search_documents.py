"""What the search index is given (backend.workspace.search): which messages and artifacts become
documents, how long texts are cut, and how a query's words are read — the same for every store."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from backend.workspace.search import (
    MAX_PARTS,
    MAX_QUERY_TERMS,
    PART_CHARS,
    artifact_documents,
    history_documents,
    parse_query,
    tokens,
)
from contracts.enums import Role
from contracts.messages import ConversationMessage, SessionHistory
from contracts.tools import ToolCall

AT = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _message(index: int, role: Role, content: str, **extra: object) -> ConversationMessage:
    return ConversationMessage(
        message_id=f"msg_{index}", session_id="sess_1", role=role, content=content, timestamp=AT, **extra
    )


def _documents(data: bytes, content_type: str = "text/plain") -> list[str]:
    found = artifact_documents(
        artifact_id="art_1",
        session_id="sess_1",
        task_id="task_1",
        name="out.txt",
        content_type=content_type,
        at=AT,
        data=data,
    )
    return [document.text for document in found]


def test_a_history_gives_its_messages_but_the_system_prompt() -> None:
    history = SessionHistory(
        workspace_id="ws_1",
        session_id="sess_1",
        snapshot_after_task_id="task_1",
        snapshot_at=AT,
        messages=[
            _message(0, Role.SYSTEM, "You are a coding agent"),
            _message(1, Role.USER, "Fix the flaky test"),
            _message(
                2,
                Role.ASSISTANT,
                "",
                tool_calls=[
                    ToolCall(tool_call_id="c1", tool_name="RunCommand", arguments={"command": "pytest -x"})
                ],
            ),
            _message(3, Role.TOOL, "1 failed", tool_call_id="c1", tool_name="RunCommand"),
        ],
    )
    documents = history_documents(history)
    assert [(d.ref_id, d.role, d.text) for d in documents] == [
        ("msg_1", Role.USER, "Fix the flaky test"),
        ("msg_2", Role.ASSISTANT, 'RunCommand {"command": "pytest -x"}'),
        ("msg_3", Role.TOOL, "RunCommand: 1 failed"),
    ]
    assert {(d.kind, d.session_id, d.at) for d in documents} == {("message", "sess_1", AT)}


@pytest.mark.parametrize(
    ("data", "content_type"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00", "text/plain"),  # a NUL byte: binary whatever it says
        (b"plain words", "application/octet-stream"),
        (b"plain words", "image/svg"),
        ("caf\xe9 latin-1".encode("latin-1"), "text/plain"),  # not UTF-8
    ],
)
def test_only_utf8_text_artifacts_are_indexed(data: bytes, content_type: str) -> None:
    assert _documents(data, content_type) == []


@pytest.mark.parametrize(
    "content_type",
    ["text/plain; charset=utf-8", "application/json", "application/vnd.api+json", "text/x-diff"],
)
def test_text_types_are_indexed(content_type: str) -> None:
    assert _documents(b"some words", content_type) == ["some words"]


def test_long_text_is_cut_into_parts_at_line_breaks_up_to_a_bound() -> None:
    line = "word " * 19 + "end\n"  # 100 characters
    parts = _documents((line * 10_000).encode())  # 1,000,000 characters
    assert len(parts) == MAX_PARTS
    assert all(len(part) <= PART_CHARS for part in parts)
    assert all(part.endswith("end\n") for part in parts)
    # A cut through the last character at the bound is not a reason to refuse the text.
    cut = ("é" * (MAX_PARTS * PART_CHARS * 4)).encode()
    assert len(_documents(cut)) == MAX_PARTS


def test_a_query_reads_as_words_and_quoted_phrases() -> None:
    query = parse_query('Database "build cache" database MIGRATIONS! café', limit=3, session_id="sess_9")
    assert query.terms == (("build", "cache"), ("database",), ("migrations",), ("cafe",))
    assert query.fts5() == '"build cache" OR "database" OR "migrations" OR "cafe"'
    assert (query.limit, query.session_id) == (3, "sess_9")
    assert parse_query("?! -- ''").terms == ()
    many = parse_query(" ".join(f"w{index}" for index in range(40)))
    assert len(many.terms) == MAX_QUERY_TERMS


def test_words_are_what_fts5s_unicode61_tokenizer_makes_them() -> None:
    assert tokens("Ünïcödé snake_case x86-64 naïve Straße 42") == [
        "unicode",
        "snake",
        "case",
        "x86",
        "64",
        "naive",
        "straße",
        "42",
    ]
