"""Seed 002's restore order, one golden file per path.

README of ``golden/`` (the files are never regenerated; they are what sessions on disk look like):

* ``legacy_checkpoint_v1.json`` and ``legacy_events.jsonl``: the checkpoint and the event log the
  released runtime (before the session runtime) wrote for a one-task session — ``WriteFile`` of
  ``a.txt`` then "Wrote a.txt." — run for real against the local backend and the scripted gateway, and
  SIGKILLed after the task completed.
* ``legacy_snapshot_events.jsonl``: that event log with the legacy ``conversation_snapshot`` event of
  seed 002 (payload ``{"conversationHistory": [...]}``, the checkpoint's thread) before
  ``task_completed``; the released runtime wrote no such event, older ones of the seed's design did.
* ``v2_checkpoint.json`` and ``v2_events.jsonl``: the same session run by this runtime — a
  ``session_runtime_v2`` checkpoint and a log holding its ``conversation_snapshot`` events.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agent_runtime.agent_host.session_runtime.restore import RestorePoint, find_restore_point
from agent_runtime.agent_host.state import CheckpointStore
from contracts.enums import CheckpointTaskStatus, Role, SessionStatus

GOLDEN = Path(__file__).parent / "golden"
LEGACY_SESSION = "sess_f4be0c10ceb44ea7a44e0921ba7c382b"
V2_SESSION = "sess_90b99e63922248c7ae7e5293a21cf0ec"


def place(tmp_path: Path, session_id: str, checkpoint: str | None, log: str | None) -> RestorePoint | None:
    """The golden ``checkpoint`` and ``log`` where the runtime keeps them; what a resume finds."""
    checkpoints = tmp_path / "checkpoints"
    checkpoints.mkdir()
    if checkpoint is not None:
        shutil.copy(GOLDEN / checkpoint, checkpoints / f"{session_id}.json")
    log_path = tmp_path / "logs" / f"{session_id}.events.jsonl"
    if log is not None:
        log_path.parent.mkdir()
        shutil.copy(GOLDEN / log, log_path)
    return find_restore_point(CheckpointStore(checkpoints), log_path, session_id)


def test_1_a_v2_checkpoint_comes_first(tmp_path: Path) -> None:
    point = place(tmp_path, V2_SESSION, "v2_checkpoint.json", "v2_events.jsonl")
    assert point is not None
    assert point.source == "checkpoint"
    assert point.snapshot is not None
    task = point.snapshot.loop.task
    assert task is not None
    assert (task.task_id, task.status, task.step_count) == ("task_1", CheckpointTaskStatus.COMPLETED, 2)
    assert [m.content for m in point.snapshot.transcript.messages][-1] == "Wrote a.txt."
    assert point.snapshot.loop.lifetime_turns == 2
    assert point.snapshot.files.writes
    assert point.snapshot.files.writes[0].endswith("a.txt")
    assert point.snapshot.tooling.calls_by_tool == {"WriteFile": 1}


def test_2_without_a_checkpoint_the_latest_v2_snapshot_event(tmp_path: Path) -> None:
    point = place(tmp_path, V2_SESSION, None, "v2_events.jsonl")
    assert point is not None
    assert point.source == "snapshot_event"
    assert point.snapshot is not None
    task = point.snapshot.loop.task
    assert task is not None
    # The latest of the log's three snapshots: the one written as the task completed.
    assert task.status is CheckpointTaskStatus.COMPLETED
    assert len(point.snapshot.transcript.messages) == 4


def test_2_a_v2_snapshot_event_comes_before_a_legacy_checkpoint(tmp_path: Path) -> None:
    point = place(tmp_path, V2_SESSION, None, "v2_events.jsonl")
    assert point is not None
    assert point.snapshot is not None
    checkpoints = tmp_path / "checkpoints"
    legacy = (GOLDEN / "legacy_checkpoint_v1.json").read_text().replace(LEGACY_SESSION, V2_SESSION)
    (checkpoints / f"{V2_SESSION}.json").write_text(legacy)
    again = find_restore_point(
        CheckpointStore(checkpoints), tmp_path / "logs" / f"{V2_SESSION}.events.jsonl", V2_SESSION
    )
    assert again is not None
    assert again.source == "snapshot_event"


def test_3_a_legacy_checkpoint_of_the_released_runtime(tmp_path: Path) -> None:
    point = place(tmp_path, LEGACY_SESSION, "legacy_checkpoint_v1.json", "legacy_events.jsonl")
    assert point is not None
    assert point.source == "legacy_checkpoint"
    assert point.legacy
    snapshot = point.snapshot
    assert snapshot is not None
    assert snapshot.snapshot_schema == "session_runtime_v2"
    assert (snapshot.tenant_id, snapshot.user_id) == ("local", "root")
    assert snapshot.policy_bundle_version == "e5bd46d11bf1f3f583ed"
    assert snapshot.transcript.session_tokens_used == 2949
    assert [m.role for m in snapshot.transcript.messages] == [
        Role.USER,
        Role.ASSISTANT,
        Role.TOOL,
        Role.ASSISTANT,
    ]
    task = snapshot.loop.task
    assert task is not None
    assert (task.prompt, task.step_count, task.step_cursor) == (
        "Write a.txt containing a",
        2,
        "step_fc771367b6564520",
    )
    assert snapshot.loop.task_count == 1
    assert snapshot.loop.session_started_at is not None


def test_4_a_legacy_snapshot_event(tmp_path: Path) -> None:
    point = place(tmp_path, LEGACY_SESSION, None, "legacy_snapshot_events.jsonl")
    assert point is not None
    assert point.source == "legacy_snapshot_event"
    assert point.snapshot is None
    assert [m.content for m in point.messages] == [
        "Write a.txt containing a",
        "Writing it.",
        "Wrote 2 bytes to /tmp/tmp89x8njo7/project/a.txt\n[Full output saved as: cowork://workspaces/"
        "ws_c00aa735bf2751532b34d8bd59d6f08d/artifacts/art_86b1f6c09cf789ce4e44d4445d72524f]",
        "Wrote a.txt.",
    ]
    assert point.workspace_id == "ws_c00aa735bf2751532b34d8bd59d6f08d"
    assert point.task is not None
    assert point.task.status is CheckpointTaskStatus.COMPLETED


def test_5_else_a_readable_conversation_from_the_event_log(tmp_path: Path) -> None:
    point = place(tmp_path, LEGACY_SESSION, None, "legacy_events.jsonl")
    assert point is not None
    assert point.source == "event_log"
    assert [(m.role, m.content) for m in point.messages] == [
        (Role.USER, "(Task task_1: its prompt was not kept in the event log.)"),
        (
            Role.ASSISTANT,
            "Writing it.\n[WriteFile succeeded] Wrote 2 bytes to /tmp/tmp89x8njo7/project/a.txt",
        ),
        (Role.ASSISTANT, "Wrote a.txt."),
    ]
    # No tool call is left open: the thread is valid for any model.
    assert all(not m.tool_calls for m in point.messages)
    task = point.task
    assert task is not None
    assert (task.task_id, task.status, task.step_count, task.max_steps) == (
        "task_1",
        CheckpointTaskStatus.COMPLETED,
        2,
        40,
    )
    assert point.session_status is SessionStatus.SESSION_RUNNING


def test_nothing_to_restore(tmp_path: Path) -> None:
    assert place(tmp_path, LEGACY_SESSION, None, None) is None


@pytest.mark.parametrize(
    "broken", [b'{"schema":"session_runtime_v2","version":2,', b'{"schema":"session_runtime_v2","version":3}']
)
def test_a_corrupt_v2_checkpoint_is_set_aside_not_replaced_by_an_older_source(
    tmp_path: Path, broken: bytes
) -> None:
    from agent_runtime.agent_host.state import CheckpointCorrupt

    checkpoints = tmp_path / "checkpoints"
    checkpoints.mkdir()
    (checkpoints / f"{V2_SESSION}.json").write_bytes(broken)
    log_path = tmp_path / "logs" / f"{V2_SESSION}.events.jsonl"
    log_path.parent.mkdir()
    shutil.copy(GOLDEN / "v2_events.jsonl", log_path)
    store = CheckpointStore(checkpoints)
    with pytest.raises(CheckpointCorrupt):
        find_restore_point(store, log_path, V2_SESSION)
    assert list(checkpoints.glob(f"{V2_SESSION}.json.corrupt-*"))
    # Nor on a later resume: the user was told recovery failed.
    assert find_restore_point(store, log_path, V2_SESSION) is None
