"""A conversation exported to Markdown (to read) and JSON (to process): whole, in order, with the
tool calls and their results, code fences that cannot be broken by the content."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from desktop.conversation.export import (
    EXPORT_FORMAT,
    ConversationExport,
    ExportError,
    to_json,
    to_markdown,
    write_export,
)

AT = "2026-03-02T09:00:00Z"
MESSAGES = [
    {"messageId": "m1", "sessionId": "s1", "role": "user", "content": "Fix the `build`", "timestamp": AT},
    {
        "messageId": "m2",
        "sessionId": "s1",
        "role": "assistant",
        "content": "Reading the log.",
        "timestamp": AT,
        "toolCalls": [{"toolCallId": "c1", "toolName": "ReadFile", "arguments": {"path": "build.log"}}],
    },
    {
        "messageId": "m3",
        "sessionId": "s1",
        "role": "tool",
        "content": "error: ```fenced``` in the log",
        "toolCallId": "c1",
        "toolName": "ReadFile",
        "toolStatus": "succeeded",
        "timestamp": AT,
    },
    {"messageId": "m4", "sessionId": "s2", "role": "assistant", "content": "Fixed it.", "timestamp": AT},
]
CONVERSATION = ConversationExport(
    title="Fix the build",
    folder="/home/me/project",
    session_ids=["s1", "s2"],
    messages=MESSAGES,
    exported_at=datetime(2026, 3, 3, 12, 0, tzinfo=UTC),
)


def test_markdown_reads_as_the_conversation_in_order() -> None:
    text = to_markdown(CONVERSATION)
    assert text.startswith("# Fix the build\n\n- Project folder: /home/me/project\n- Exported: 2026-03-03")
    order = [
        text.index(part)
        for part in ("## You", "Fix the `build`", "Reading the log.", "ReadFile", "Fixed it.")
    ]
    assert order == sorted(order)
    assert '"path": "build.log"' in text
    assert "**Result of `ReadFile`** (succeeded)" in text
    # The tool output holds a triple backtick: its fence is longer, so it cannot end early.
    assert "````\nerror: ```fenced``` in the log\n````" in text


def test_json_holds_every_message_and_says_what_it_is() -> None:
    document = json.loads(to_json(CONVERSATION))
    assert document["format"] == EXPORT_FORMAT
    assert document["version"] == 1
    assert document["title"] == "Fix the build"
    assert document["sessionIds"] == ["s1", "s2"]
    assert document["exportedAt"] == "2026-03-03T12:00:00Z"
    assert document["messages"] == MESSAGES


def test_the_file_name_chooses_the_format(tmp_path: Path) -> None:
    write_export(tmp_path / "chat.md", CONVERSATION)
    write_export(tmp_path / "chat.JSON", CONVERSATION)
    assert (tmp_path / "chat.md").read_text(encoding="utf-8") == to_markdown(CONVERSATION)
    assert json.loads((tmp_path / "chat.JSON").read_text(encoding="utf-8"))["messages"] == MESSAGES
    with pytest.raises(ExportError, match=r"\.md or \.json"):
        write_export(tmp_path / "chat.txt", CONVERSATION)


def test_a_folder_that_cannot_be_written_is_said(tmp_path: Path) -> None:
    with pytest.raises(ExportError, match="could not be written"):
        write_export(tmp_path / "missing" / "chat.md", CONVERSATION)
