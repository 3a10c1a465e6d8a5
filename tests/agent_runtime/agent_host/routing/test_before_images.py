"""The before-images a revert needs, on real files: kept across a restart, bounded per file and per
session (the oldest task's dropped first, and the preview then says why revert is not available),
and never used on a file changed since the agent's last write."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from agent_runtime.agent_host.routing.before_images import BeforeImages, changes_dir, prune_old_sessions
from agent_runtime.agent_host.session_runtime.errors import StateConflict
from contracts.errors import CoworkError, ErrorCode


def write(images: BeforeImages, path: Path, content: bytes | None, task_id: str) -> None:
    """A tool's write as the dispatch brackets it."""
    images.before_write(str(path), task_id)
    if content is None:
        path.unlink()
    else:
        path.write_bytes(content)
    images.after_write(str(path), task_id)


def test_before_images_survive_a_restart_and_restore_content_and_mode(tmp_path: Path) -> None:
    file = tmp_path / "script.sh"
    file.write_bytes(b"#!/bin/sh\necho one\n")
    file.chmod(0o750)
    images = BeforeImages.for_session(tmp_path / "data", "sess_1")
    write(images, file, b"#!/bin/sh\necho two\n", "task_1")
    file.chmod(0o600)  # the mode is not the content: a revert puts back the earlier one too

    again = BeforeImages.for_session(tmp_path / "data", "sess_1")
    assert again.exists
    assert again.task_ids(str(file)) == ["task_1"]
    (target,) = again.targets("task_1", None)
    again.check([target])
    assert again.apply(target).action == "restored"
    assert file.read_bytes() == b"#!/bin/sh\necho one\n"
    assert file.stat().st_mode & 0o777 == 0o750
    assert again.paths() == []


def test_a_task_cannot_be_reverted_under_a_later_tasks_change_but_the_conversation_can(
    tmp_path: Path,
) -> None:
    file = tmp_path / "notes.txt"
    file.write_bytes(b"v0\n")
    images = BeforeImages(tmp_path / "changes")
    write(images, file, b"v1\n", "task_1")
    write(images, file, b"v2\n", "task_2")
    with pytest.raises(CoworkError) as caught:
        images.targets("task_1", None)
    assert isinstance(caught.value, StateConflict)
    assert caught.value.code is ErrorCode.INVALID_REQUEST
    details = {"reason": "changedByLaterTask", "path": str(file), "taskId": "task_1"}
    assert caught.value.shape.details == details
    assert "later task" in caught.value.shape.message
    target = images.target(str(file), None)
    images.check([target])
    images.apply(target)
    assert file.read_bytes() == b"v0\n"


def test_a_file_changed_since_the_last_write_is_refused_and_left_alone(tmp_path: Path) -> None:
    file = tmp_path / "created.txt"
    images = BeforeImages(tmp_path / "changes")
    write(images, file, b"from the agent\n", "task_1")
    file.write_bytes(b"the user's now\n")
    assert images.availability(str(file)) == (
        False,
        f"{file} was changed after the agent's last write to it; it is left as it is.",
    )
    with pytest.raises(CoworkError) as caught:
        images.check(images.targets("task_1", None))
    assert isinstance(caught.value, StateConflict)
    assert caught.value.code is ErrorCode.INVALID_REQUEST
    assert caught.value.shape.details == {"reason": "changedOnDisk", "path": str(file)}
    assert file.read_bytes() == b"the user's now\n"


def test_a_file_over_the_per_file_cap_is_not_kept_and_says_so(tmp_path: Path) -> None:
    big = tmp_path / "big.bin"
    big.write_bytes(b"x" * 2048)
    images = BeforeImages(tmp_path / "changes", max_file_bytes=1024)
    write(images, big, b"small", "task_1")
    revertible, note = images.availability(str(big))
    assert not revertible
    assert note is not None
    assert "larger than" in note
    assert not (tmp_path / "changes" / "blobs").exists() or not any(
        (tmp_path / "changes" / "blobs").iterdir()
    )


def test_the_oldest_tasks_images_are_dropped_to_stay_within_the_session_bound(tmp_path: Path) -> None:
    images = BeforeImages(tmp_path / "changes", max_bytes=3000, max_file_bytes=2000)
    old, new = tmp_path / "old.txt", tmp_path / "new.txt"
    old.write_bytes(b"o" * 1500)
    new.write_bytes(b"n" * 1800)
    write(images, old, b"changed", "task_1")
    assert images.availability(str(old)) == (True, None)
    write(images, new, b"changed", "task_2")
    assert images.availability(str(new)) == (True, None)
    revertible, note = images.availability(str(old))
    assert not revertible
    assert note is not None
    assert "size limit" in note
    blobs = list((tmp_path / "changes" / "blobs").iterdir())
    assert sum(blob.stat().st_size for blob in blobs) <= 3000


def test_sessions_untouched_for_long_are_pruned(tmp_path: Path) -> None:
    data = tmp_path / "data"
    for session in ("sess_old", "sess_new"):
        images = BeforeImages.for_session(data, session)
        write(images, tmp_path / f"{session}.txt", b"x", "task_1")
    index = changes_dir(data) / "sess_old" / "index.json"
    month_ago = time.time() - 31 * 86400
    os.utime(index, (month_ago, month_ago))
    assert prune_old_sessions(data) == 1
    assert sorted(p.name for p in changes_dir(data).iterdir()) == ["sess_new"]
