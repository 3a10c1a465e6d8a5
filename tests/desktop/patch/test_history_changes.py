"""A past conversation whose earlier content this computer no longer keeps: its history still names
the files its tasks changed, listed in the preview without a diff and without Revert."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from desktop.patch.model import changes_from_history, read_preview


def call(session: str, task: str, call_id: str, tool: str, path: str) -> list[dict[str, Any]]:
    return [
        {
            "role": "assistant",
            "sessionId": session,
            "taskId": task,
            "content": "",
            "toolCalls": [{"toolCallId": call_id, "toolName": tool, "arguments": {"path": path}}],
        },
        {
            "role": "tool",
            "sessionId": session,
            "taskId": task,
            "toolCallId": call_id,
            "toolStatus": "succeeded",
        },
    ]


def test_files_of_sessions_not_kept_are_listed_without_diff_or_revert(tmp_path: Path) -> None:
    messages = [
        {"role": "user", "sessionId": "sess_old", "content": "Tidy up"},
        *call("sess_old", "task_1", "c1", "WriteFile", "notes.txt"),
        *call("sess_old", "task_1", "c2", "ReadFile", "other.txt"),
        *call("sess_old", "task_2", "c3", "DeleteFile", str(tmp_path / "gone.txt")),
        *call("sess_old", "task_2", "c4", "EditFile", "notes.txt"),
        # Kept by this computer: the runtime listed them already.
        *call("sess_kept", "task_1", "c5", "WriteFile", "kept.txt"),
        # Refused or failed: nothing changed.
        {
            "role": "assistant",
            "sessionId": "sess_old",
            "taskId": "task_2",
            "content": "",
            "toolCalls": [{"toolCallId": "c6", "toolName": "WriteFile", "arguments": {"path": "denied.txt"}}],
        },
        {"role": "tool", "sessionId": "sess_old", "toolCallId": "c6", "toolStatus": "failed"},
    ]
    found = changes_from_history(messages, tmp_path, {str(tmp_path / "listed.txt")}, {"sess_kept"})
    assert [(f["path"], f["status"], f["taskIds"]) for f in found] == [
        (str(tmp_path / "gone.txt"), "deleted", ["task_2"]),
        (str(tmp_path / "notes.txt"), "modified", ["task_1", "task_2"]),
    ]
    entries = read_preview({"files": found}, tmp_path).entries
    assert [e.display_path for e in entries] == ["gone.txt", "notes.txt"]
    assert all(not e.revertible and not e.has_hunks for e in entries)
    assert all(e.session_id == "sess_old" for e in entries)
    assert "not kept on this computer" in entries[0].revert_note


def test_nothing_odd_in_a_history_breaks_it(tmp_path: Path) -> None:
    assert changes_from_history(None, tmp_path, set(), set()) == []
    odd = [None, {"toolCalls": [None, {"toolName": "WriteFile", "arguments": "x"}]}, {"role": "tool"}]
    assert changes_from_history(odd, None, set(), set()) == []
