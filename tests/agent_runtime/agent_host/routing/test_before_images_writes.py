"""What a step pays for its before-images, and what stays guaranteed: the result's hash comes from the
bytes the tool wrote (a change by someone else right after is refused, never overwritten), and the
index rewrite, taken off the step, is on disk for everything that reads it — a revert, another
instance on the same directory (a restart), and a process that exits right after its last write."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agent_runtime.agent_host.routing.before_images import BeforeImages, changes_dir
from agent_runtime.agent_host.session_runtime.errors import StateConflict
from tests.support.peers import REPO_ROOT


def test_a_file_changed_right_after_the_tools_write_is_refused_and_left_alone(tmp_path: Path) -> None:
    file = tmp_path / "notes.txt"
    file.write_bytes(b"original\n")
    images = BeforeImages.for_session(tmp_path / "data", "sess_1")
    images.before_write(str(file), "task_1")
    file.write_bytes(b"the agent's\n")
    file.write_bytes(b"the user's, a moment later\n")  # before the write was even noted
    images.after_write(str(file), "task_1", left=b"the agent's\n")

    (target,) = images.targets("task_1", None)
    with pytest.raises(StateConflict):
        images.check([target])
    assert file.read_bytes() == b"the user's, a moment later\n"


def test_what_the_tool_wrote_reverts_without_being_read_back(tmp_path: Path) -> None:
    file = tmp_path / "notes.txt"
    file.write_bytes(b"original\n")
    images = BeforeImages.for_session(tmp_path / "data", "sess_1")
    images.before_write(str(file), "task_1")
    file.write_bytes(b"changed\n")
    images.after_write(str(file), "task_1", left=b"changed\n")

    (target,) = images.targets("task_1", None)
    images.check([target])
    assert images.apply(target).action == "restored"
    assert file.read_bytes() == b"original\n"
    index = json.loads((changes_dir(tmp_path / "data") / "sess_1" / "index.json").read_bytes())
    assert index["tasks"][0]["files"][0]["reverted"] is True  # written before apply returned


def test_a_restart_right_after_a_write_finds_it_kept(tmp_path: Path) -> None:
    file = tmp_path / "a.txt"
    images = BeforeImages.for_session(tmp_path / "data", "sess_1")
    images.before_write(str(file), "task_1")
    file.write_bytes(b"new\n")
    images.after_write(str(file), "task_1", left=b"new\n")

    again = BeforeImages.for_session(tmp_path / "data", "sess_1")  # no flush in between
    assert again.exists
    (target,) = again.targets("task_1", None)
    again.check([target])
    assert again.apply(target).action == "removed"
    assert not file.exists()


def test_a_process_that_exits_right_after_its_last_write_leaves_the_index_on_disk(tmp_path: Path) -> None:
    file = tmp_path / "a.txt"
    data = tmp_path / "data"
    script = textwrap.dedent(
        f"""
        from pathlib import Path
        from agent_runtime.agent_host.routing.before_images import BeforeImages
        images = BeforeImages.for_session(Path({str(data)!r}), "sess_1")
        images.before_write({str(file)!r}, "task_1")
        Path({str(file)!r}).write_bytes(b"new\\n")
        images.after_write({str(file)!r}, "task_1", left=b"new\\n")
        """
    )
    subprocess.run([sys.executable, "-c", script], cwd=REPO_ROOT, check=True, timeout=60)

    index = json.loads((changes_dir(data) / "sess_1" / "index.json").read_bytes())
    (record,) = index["tasks"][0]["files"]
    assert record["path"] == str(file)
    assert record["afterKnown"] is True
