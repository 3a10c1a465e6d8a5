"""The step journal: what a crash must not lose within a task is made durable with one small append on
top of the last checkpoint, and a load restores exactly the latest state."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agent_runtime.agent_host.state import CheckpointStore, serialize_checkpoint
from agent_runtime.agent_host.state.journal import GROW_BYTES, JOURNAL_SUFFIX, encode_record
from contracts.enums import Role
from contracts.messages import ConversationMessage
from contracts.session_runtime import SessionRuntimeSnapshot
from contracts.tools import ToolCall

GOLDEN = Path(__file__).parents[1] / "session_runtime" / "golden" / "v2_checkpoint.json"


@pytest.fixture
def store(tmp_path: Path) -> CheckpointStore:
    return CheckpointStore(tmp_path / "checkpoints")


def golden() -> SessionRuntimeSnapshot:
    return SessionRuntimeSnapshot.model_validate_json(GOLDEN.read_bytes())


def with_tool_call(snapshot: SessionRuntimeSnapshot, number: int) -> SessionRuntimeSnapshot:
    """The snapshot one model answer later: a WriteFile call about to run, and a new step counted."""
    message = ConversationMessage(
        message_id=f"msg_inflight_{number}",
        session_id=snapshot.session_id,
        task_id="task_1",
        step_id=f"step_inflight_{number}",
        role=Role.ASSISTANT,
        content=f"Writing b{number}.txt — ünïcode ✓",
        timestamp=datetime(2026, 11, 25, 15, number, tzinfo=UTC),
        tool_calls=[
            ToolCall(
                tool_call_id=f"call_{number}", tool_name="WriteFile", arguments={"path": f"b{number}.txt"}
            )
        ],
    )
    transcript = snapshot.transcript.model_copy(
        update={"messages": [*snapshot.transcript.messages, message], "session_tokens_used": 1000 + number}
    )
    loop = snapshot.loop.model_copy(update={"lifetime_turns": snapshot.loop.lifetime_turns + 1})
    return snapshot.model_copy(update={"transcript": transcript, "loop": loop})


def journal_path(store: CheckpointStore, snapshot: SessionRuntimeSnapshot) -> Path:
    return store.directory / f"{snapshot.session_id}{JOURNAL_SUFFIX}"


def records(path: Path) -> bytes:
    """The journal's records, without the zeros the file is grown with ahead of them."""
    return path.read_bytes().rstrip(b"\0")


def test_a_load_after_a_record_restores_the_state_it_holds(store: CheckpointStore) -> None:
    base = golden()
    checkpoint_bytes = store.write(base)
    in_flight = with_tool_call(base, 1)
    assert store.write_step(in_flight) is False, "a record, not a whole checkpoint, was expected"
    # The checkpoint itself was not rewritten: the record beside it carries the step's start.
    assert store.path_for(base.session_id).read_bytes() == checkpoint_bytes
    assert len(records(journal_path(store, base))) < len(checkpoint_bytes)

    loaded = CheckpointStore(store.directory).load(base.session_id)  # a new process after a crash
    assert loaded == in_flight
    assert serialize_checkpoint(loaded) == serialize_checkpoint(in_flight)


def test_the_next_checkpoint_makes_the_record_stale(store: CheckpointStore) -> None:
    base = golden()
    store.write(base)
    store.write_step(with_tool_call(base, 1))
    after_step = with_tool_call(base, 2)
    store.write(after_step)
    assert journal_path(store, base).exists()  # not deleted: it no longer fits the checkpoint
    assert CheckpointStore(store.directory).load(base.session_id) == after_step


def test_each_step_appends_a_record_and_a_load_takes_the_latest(store: CheckpointStore) -> None:
    snapshot = golden()
    checkpoint_bytes = store.write(snapshot)
    for number in range(1, 6):
        snapshot = with_tool_call(snapshot, number)
        assert store.write_step(snapshot) is False
        assert CheckpointStore(store.directory).load(snapshot.session_id) == snapshot
    assert store.path_for(snapshot.session_id).read_bytes() == checkpoint_bytes


def test_a_torn_last_record_leaves_the_record_before_it(store: CheckpointStore) -> None:
    base = golden()
    store.write(base)
    first = with_tool_call(base, 1)
    store.write_step(first)
    path = journal_path(store, base)
    intact = len(records(path))
    store.write_step(with_tool_call(first, 2))
    whole = records(path)
    # A crash in the middle of the second append: only part of it reached the disk, the zeros it was
    # written over after it (or, in a file that was not grown, nothing).
    for cut in (intact + 10, (intact + len(whole)) // 2, len(whole) - 1):
        for tail in (b"", bytes(GROW_BYTES)):
            path.write_bytes(whole[:cut] + tail)
            assert CheckpointStore(store.directory).load(base.session_id) == first
    # Torn inside the first record: nothing of the journal is used, the checkpoint is the state.
    path.write_bytes(whole[: intact // 2])
    assert CheckpointStore(store.directory).load(base.session_id) == base


def test_a_damaged_record_is_ignored(store: CheckpointStore) -> None:
    base = golden()
    store.write(base)
    store.write_step(with_tool_call(base, 1))
    path = journal_path(store, base)
    damaged = bytearray(records(path))
    damaged[-5] ^= 0x20
    path.write_bytes(bytes(damaged) + bytes(GROW_BYTES))
    assert CheckpointStore(store.directory).load(base.session_id) == base


def test_a_journal_grown_as_large_as_the_checkpoint_is_folded_into_a_new_one(
    store: CheckpointStore,
) -> None:
    snapshot = golden()
    store.write(snapshot)
    kinds = []
    for number in range(1, 40):
        # Big messages: the journal outgrows its minimum size within a few steps.
        snapshot = with_tool_call(snapshot, number)
        snapshot = snapshot.model_copy(
            update={"workspace_paths": [*snapshot.workspace_paths[:1], "/p" * 20_000]}
        )
        kinds.append(store.write_step(snapshot))
        assert CheckpointStore(store.directory).load(snapshot.session_id) == snapshot
    assert True in kinds, "the journal never made way for a checkpoint"
    assert kinds.count(False) > kinds.count(True)
    journal = len(records(journal_path(store, snapshot)))
    assert journal <= max(store.path_for(snapshot.session_id).stat().st_size, 256 * 1024)


def test_records_overwrite_zeros_the_file_was_grown_with(store: CheckpointStore) -> None:
    """An append within the grown file changes no size: its fdatasync commits no metadata."""
    snapshot = golden()
    store.write(snapshot)
    sizes = []
    for number in range(1, 6):
        snapshot = with_tool_call(snapshot, number)
        assert store.write_step(snapshot) is False
        path = journal_path(store, snapshot)
        sizes.append(path.stat().st_size)
        assert CheckpointStore(store.directory).load(snapshot.session_id) == snapshot
    assert len(records(path)) < GROW_BYTES < sizes[0]
    assert len(set(sizes)) == 1, "the file grew with each record"


def test_without_a_checkpoint_of_this_store_the_whole_checkpoint_is_written(store: CheckpointStore) -> None:
    base = golden()
    store.directory.mkdir(parents=True)
    store.path_for(base.session_id).write_bytes(GOLDEN.read_bytes())  # as restored after a restart
    in_flight = with_tool_call(base, 1)
    assert store.write_step(in_flight) is True
    assert not journal_path(store, base).exists()
    assert CheckpointStore(store.directory).load(base.session_id) == in_flight


def test_a_changed_thread_is_written_whole(store: CheckpointStore) -> None:
    base = golden()
    store.write(base)
    # Compaction replaced the oldest messages: the checkpoint's messages are no longer a prefix.
    compacted = with_tool_call(base, 1)
    compacted = compacted.model_copy(
        update={
            "transcript": compacted.transcript.model_copy(
                update={"messages": compacted.transcript.messages[2:]}
            )
        }
    )
    assert store.write_step(compacted) is True
    assert CheckpointStore(store.directory).load(base.session_id) == compacted


def test_deleting_the_session_removes_its_record(store: CheckpointStore) -> None:
    base = golden()
    store.write(base)
    store.write_step(with_tool_call(base, 1))
    store.delete(base.session_id)
    assert os.listdir(store.directory) == []
    assert store.load(base.session_id) is None


@pytest.mark.skipif(os.name == "nt", reason="POSIX permission bits")
def test_the_record_is_owner_only(store: CheckpointStore) -> None:
    base = golden()
    store.write(base)
    store.write_step(with_tool_call(base, 1))
    assert journal_path(store, base).stat().st_mode & 0o777 == 0o600


def test_a_record_whose_state_does_not_validate_leaves_the_checkpoint(store: CheckpointStore) -> None:
    base = golden()
    checkpoint_bytes = store.write(base)
    envelope = serialize_checkpoint(base).replace(b'"SESSION_RUNNING"', b'"NOT_A_STATUS"')
    count = len(base.transcript.messages)
    journal_path(store, base).write_bytes(encode_record(checkpoint_bytes, count, envelope, []))
    assert CheckpointStore(store.directory).load(base.session_id) == base
