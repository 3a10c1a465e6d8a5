"""The Local State Store keeps one usable checkpoint per session, or none — never a broken one
(seed 000 §9.2–§9.7)."""

from __future__ import annotations

import errno
import json
import logging
import os
import stat
import sys
from pathlib import Path

import platformdirs
import pytest

from agent_runtime.agent_host.state import (
    CheckpointCorrupt,
    CheckpointError,
    CheckpointStore,
    event_log_path,
    runtime_data_dir,
    serialize_checkpoint,
)
from agent_runtime.agent_host.state import store as store_module
from tests.agent_runtime.agent_host.state.samples import sample_checkpoint
from tests.agent_runtime.agent_host.state.subprocesses import run_module

REFUSED = r"session ID|device name"
POSIX = pytest.mark.skipif(os.name == "nt", reason="POSIX permission bits")


@pytest.fixture
def store(tmp_path: Path) -> CheckpointStore:
    return CheckpointStore(tmp_path / "data" / "checkpoints")


def leftovers(store: CheckpointStore) -> list[str]:
    return sorted(name for name in os.listdir(store.directory) if name.endswith(".tmp"))


# ---------------------------------------------------------------- round trip


def test_a_written_checkpoint_loads_back_equal(store: CheckpointStore) -> None:
    checkpoint = sample_checkpoint(messages=30)
    store.write(checkpoint)
    assert store.load("sess_789") == checkpoint


def test_the_file_holds_the_seeds_wire_format(store: CheckpointStore) -> None:
    checkpoint = sample_checkpoint()
    store.write(checkpoint)
    on_disk = json.loads(store.path_for("sess_789").read_bytes())
    assert on_disk == checkpoint.to_wire()
    assert on_disk["checkpointVersion"] == "1.0"
    assert on_disk["stepCursor"] == "step_003"
    assert {"sessionTokensUsed", "policyBundleVersion", "checkpointedAt"} <= on_disk.keys()


def test_each_write_replaces_the_previous_checkpoint(store: CheckpointStore) -> None:
    store.write(sample_checkpoint(messages=50, step=1))
    newer = sample_checkpoint(messages=8, step=2)
    store.write(newer)
    assert store.load("sess_789") == newer
    assert os.listdir(store.directory) == ["sess_789.json"]


def test_a_missing_checkpoint_loads_as_none(store: CheckpointStore) -> None:
    assert store.load("sess_none") is None
    assert not store.directory.exists()


def test_reused_message_json_matches_a_full_serialisation_as_the_thread_grows(
    store: CheckpointStore,
) -> None:
    full = sample_checkpoint(messages=60)
    for length in (10, 11, 30, 60, 5):
        checkpoint = full.model_copy(update={"thread": full.thread[:length]})
        store.write(checkpoint)
        assert store.path_for("sess_789").read_bytes() == serialize_checkpoint(checkpoint)


def test_a_message_replaced_by_a_copy_is_serialised_afresh(store: CheckpointStore) -> None:
    checkpoint = sample_checkpoint(messages=6)
    store.write(checkpoint)
    changed = checkpoint.thread[2].model_copy(update={"content": "rewritten after restore"})
    updated = checkpoint.model_copy(
        update={"thread": [*checkpoint.thread[:2], changed, *checkpoint.thread[3:]]}
    )
    store.write(updated)
    loaded = store.load("sess_789")
    assert loaded is not None
    assert loaded.thread[2].content == "rewritten after restore"


# ---------------------------------------------------------------- corruption (§9.7)


def _valid_wire() -> dict[str, object]:
    return sample_checkpoint(messages=4).to_wire()


def _with(**changes: object) -> bytes:
    document = _valid_wire() | changes
    return json.dumps(document).encode()


def _invalid_message() -> bytes:
    document = _valid_wire()
    thread = document["thread"]
    assert isinstance(thread, list)
    thread[1] = {**thread[1], "role": "wizard"}
    return json.dumps(document).encode()


CORRUPT_FILES = {
    "truncated": serialize_checkpoint(sample_checkpoint(messages=4))[:-37],
    "empty": b"",
    "garbage": b"\x00\xff\xfe not json at all",
    "not an object": b"[1, 2, 3]",
    "unknown version": _with(checkpointVersion="2.0"),
    "missing version": json.dumps(
        {k: v for k, v in _valid_wire().items() if k != "checkpointVersion"}
    ).encode(),
    "another session's": _with(sessionId="sess_other"),
    "invalid message": _invalid_message(),
    "missing field": json.dumps({k: v for k, v in _valid_wire().items() if k != "thread"}).encode(),
    "unknown field": _with(surprise=True),
    "integer as string": _with(sessionTokensUsed="12540"),
    "deeply nested": b"[" * 100_000 + b"]" * 100_000,
}


@pytest.mark.parametrize("content", CORRUPT_FILES.values(), ids=CORRUPT_FILES.keys())
def test_a_corrupt_checkpoint_is_reported_and_set_aside(
    store: CheckpointStore, content: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    store.directory.mkdir(parents=True)
    path = store.path_for("sess_789")
    path.write_bytes(content)
    with (
        caplog.at_level(logging.ERROR, logger=store_module.__name__),
        pytest.raises(CheckpointCorrupt) as caught,
    ):
        store.load("sess_789")
    assert isinstance(caught.value, CheckpointError)
    assert caught.value.session_id == "sess_789"
    assert caught.value.reason
    assert "pydantic" not in caught.value.reason
    assert not path.exists()
    # Kept beside it for diagnosis, byte for byte, under a name that is never read as a checkpoint.
    assert caught.value.moved_to is not None
    assert caught.value.moved_to.startswith("sess_789.json.corrupt-")
    assert (store.directory / caught.value.moved_to).read_bytes() == content
    assert any(record.levelno == logging.ERROR for record in caplog.records)
    assert store.load("sess_789") is None
    assert store.session_ids() == []


def test_an_unknown_version_is_named_as_such(store: CheckpointStore) -> None:
    store.directory.mkdir(parents=True)
    store.path_for("sess_789").write_bytes(_with(checkpointVersion="9.9"))
    with pytest.raises(CheckpointCorrupt) as caught:
        store.load("sess_789")
    assert '"9.9"' in caught.value.reason


def test_an_unreadable_checkpoint_counts_as_corrupt(store: CheckpointStore) -> None:
    store.path_for("sess_789").mkdir(parents=True)  # a directory where the file should be
    with pytest.raises(CheckpointCorrupt):
        store.load("sess_789")


def test_a_file_larger_than_any_checkpoint_is_corrupt_not_read(
    store: CheckpointStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.write(sample_checkpoint(messages=20))
    monkeypatch.setattr(store_module, "MAX_CHECKPOINT_BYTES", 1024)
    with pytest.raises(CheckpointCorrupt):
        store.load("sess_789")
    assert not store.path_for("sess_789").exists()


def test_a_checkpoint_over_the_size_limit_is_not_written(
    store: CheckpointStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    previous = sample_checkpoint(messages=2)
    store.write(previous)
    monkeypatch.setattr(store_module, "MAX_CHECKPOINT_BYTES", len(serialize_checkpoint(previous)) + 10)
    with pytest.raises(OSError):  # noqa: PT011 - the loop catches exactly OSError (seed 000 §11)
        store.write(sample_checkpoint(messages=40))
    assert store.load("sess_789") == previous


# ---------------------------------------------------------------- leftovers, listing, deleting


def test_temp_leftovers_are_never_loaded_and_are_removed_by_the_next_load(store: CheckpointStore) -> None:
    store.write(sample_checkpoint(step=1))
    (store.directory / ".sess_789.json.deadbeef.tmp").write_bytes(b'{"half": ')
    (store.directory / ".sess_other.json.cafe.tmp").write_bytes(b"another session mid-write")
    assert store.session_ids() == ["sess_789"]
    loaded = store.load("sess_789")
    assert loaded is not None
    assert loaded.step_cursor == "step_001"
    assert leftovers(store) == [".sess_other.json.cafe.tmp"]


def test_temp_leftovers_are_removed_by_the_next_write(store: CheckpointStore) -> None:
    store.directory.mkdir(parents=True)
    (store.directory / ".sess_789.json.0011.tmp").write_bytes(b"partial")
    store.write(sample_checkpoint())
    assert leftovers(store) == []


def test_session_ids_lists_checkpoints_newest_first(store: CheckpointStore) -> None:
    for age, session_id in enumerate(["sess_c", "sess_a", "sess_b"]):
        store.write(sample_checkpoint(session_id, messages=2))
        modified = 1_700_000_000 - age * 60
        os.utime(store.path_for(session_id), (modified, modified))
    (store.directory / "notes.txt").write_text("not a checkpoint")
    (store.directory / "..json").write_text("{}")
    (store.directory / "sess_dir.json").mkdir()
    assert store.session_ids() == ["sess_c", "sess_a", "sess_b"]


def test_session_ids_of_a_store_never_written_is_empty(store: CheckpointStore) -> None:
    assert store.session_ids() == []


def test_delete_removes_the_checkpoint_and_ignores_absence(store: CheckpointStore) -> None:
    store.write(sample_checkpoint())
    store.write(sample_checkpoint("sess_keep", messages=2))
    store.delete("sess_789")
    store.delete("sess_789")
    store.delete("sess_never_written")
    assert store.load("sess_789") is None
    assert store.session_ids() == ["sess_keep"]


# ---------------------------------------------------------------- permissions and file names


@POSIX
def test_checkpoints_are_owner_only(tmp_path: Path) -> None:
    old_umask = os.umask(0o000)  # the store must not rely on a kind umask
    try:
        store = CheckpointStore(tmp_path / "data" / "checkpoints")
        store.write(sample_checkpoint())
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE(store.directory.stat().st_mode) == 0o700
    assert stat.S_IMODE(store.directory.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(store.path_for("sess_789").stat().st_mode) == 0o600


TRAVERSAL_IDS = [
    "../escaped",
    "..",
    ".",
    "",
    "a/b",
    "a\\b",
    "/etc/passwd",
    "C:\\Windows\\evil",
    "sess\x00.json",
    "sess..x",
    ".hidden",
    "trailing.",
    "with space",
    "x" * 129,
    "NUL",
    "con.backup",
    "COM1",
    "sess\n",
    "séss",
]


@pytest.mark.parametrize("session_id", TRAVERSAL_IDS)
def test_a_session_id_that_is_not_a_safe_file_name_is_refused(tmp_path: Path, session_id: str) -> None:
    store = CheckpointStore(tmp_path / "deep" / "checkpoints")
    store.directory.mkdir(parents=True)
    before = sorted(tmp_path.rglob("*"))
    with pytest.raises(ValueError, match=REFUSED):
        store.path_for(session_id)
    with pytest.raises(ValueError, match=REFUSED):
        store.load(session_id)
    with pytest.raises(ValueError, match=REFUSED):
        store.delete(session_id)
    with pytest.raises(ValueError, match=REFUSED):
        store.write(sample_checkpoint(messages=2).model_copy(update={"session_id": session_id}))
    with pytest.raises(ValueError, match=REFUSED):
        event_log_path(tmp_path, session_id)
    assert sorted(tmp_path.rglob("*")) == before


def test_a_traversal_id_cannot_delete_a_file_outside_the_store(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path / "checkpoints")
    victim = tmp_path / "victim.json"
    victim.write_text("precious")
    with pytest.raises(ValueError, match="session ID"):
        store.delete("../victim")
    assert victim.read_text() == "precious"


@pytest.mark.parametrize("session_id", ["sess_789", "sess_4f0c9d2e", "a", "A-b_c.d", "x" * 128])
def test_ordinary_session_ids_are_accepted(store: CheckpointStore, session_id: str) -> None:
    assert store.path_for(session_id).name == f"{session_id}.json"


# ---------------------------------------------------------------- failures leave the old checkpoint


@POSIX
@pytest.mark.skipif(os.name != "nt" and os.geteuid() == 0, reason="root ignores directory permissions")
def test_a_read_only_directory_fails_the_write_and_keeps_the_old_checkpoint(store: CheckpointStore) -> None:
    previous = sample_checkpoint(step=1)
    store.write(previous)
    store.directory.chmod(0o500)
    try:
        with pytest.raises(PermissionError):
            store.write(sample_checkpoint(step=2))
    finally:
        store.directory.chmod(0o700)
    assert store.load("sess_789") == previous
    assert leftovers(store) == []


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
def test_a_full_disk_fails_the_write_and_keeps_the_old_checkpoint(tmp_path: Path) -> None:
    directory = tmp_path / "checkpoints"
    outcome = json.loads(run_module("fsize_child", str(directory), "4096"))
    assert outcome == {"raised": "OSError", "errno": errno.EFBIG}  # the kernel refused the bytes
    store = CheckpointStore(directory)
    loaded = store.load("sess_full")
    assert loaded is not None
    assert loaded.step_cursor == "step_001"
    assert leftovers(store) == []


# ---------------------------------------------------------------- where the files live


def test_the_data_dir_comes_from_the_environment(tmp_path: Path) -> None:
    store = CheckpointStore.from_environment({"COWORK_RUNTIME_DATA_DIR": str(tmp_path / "rt")})
    assert store.directory == tmp_path / "rt" / "checkpoints"
    assert event_log_path(tmp_path / "rt", "sess_1") == tmp_path / "rt" / "logs" / "sess_1.events.jsonl"


def test_without_configuration_the_data_dir_is_the_users_data_dir() -> None:
    expected = Path(platformdirs.user_data_dir("Cowork", appauthor=False)) / "agent-runtime"
    assert runtime_data_dir({}) == expected
    assert runtime_data_dir({"COWORK_RUNTIME_DATA_DIR": "  "}) == expected
    assert CheckpointStore.from_environment({}).directory == expected / "checkpoints"


def test_a_relative_data_dir_is_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert runtime_data_dir({"COWORK_RUNTIME_DATA_DIR": "rt"}) == tmp_path / "rt"
