"""The session's patch preview (``GetPatchPreview``): net diffs of what WriteFile and DeleteFile changed,
through the real tool runtime on real files."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agent_runtime.agent_host.routing import PatchTracker, ToolDispatch
from agent_runtime.tool_runtime import LocalToolRouter
from contracts.enums import PatchFileStatus, ToolStatus
from contracts.methods import PatchFile, PatchPreview
from tests.agent_runtime.agent_host.routing.support import tool_call


async def run(dispatch: ToolDispatch, name: str, task_id: str = "task-1", **arguments: Any) -> None:
    ids = {"session_id": "sess-1", "task_id": task_id, "step_id": "step-1"}
    prepared = dispatch.prepare(tool_call(name, **arguments), **ids)
    result = await dispatch.execute(prepared, workspace_id="ws-1", scope=None, **ids)
    assert result.status is ToolStatus.SUCCEEDED, result.error


def by_path(preview: PatchPreview) -> dict[str, PatchFile]:
    return {Path(f.path).name: f for f in preview.files}


async def test_a_created_file_shows_as_created_with_its_whole_content(
    dispatch: ToolDispatch, workspace: Path
) -> None:
    await run(dispatch, "WriteFile", path="src/new.py", content="a = 1\nb = 2\n")
    (patch,) = dispatch.patch_preview().files
    assert patch.path == str(workspace / "src" / "new.py")
    assert patch.status is PatchFileStatus.CREATED
    assert patch.size_bytes == len("a = 1\nb = 2\n")
    assert patch.diff.splitlines()[:3] == ["--- /dev/null", "+++ b/src/new.py", "@@ -0,0 +1,2 @@"]
    assert "+a = 1\n+b = 2\n" in patch.diff


@pytest.mark.skipif(shutil.which("patch") is None, reason="needs the patch program")
async def test_several_writes_to_one_file_show_one_net_diff_that_applies(
    dispatch: ToolDispatch, workspace: Path, tmp_path: Path
) -> None:
    original = "one\ntwo\nthree\n"
    (workspace / "f.txt").write_text(original)
    await run(dispatch, "WriteFile", path="f.txt", content="one\nTWO\nthree\n")
    await run(dispatch, "WriteFile", path="f.txt", content="one\nTWO\nthree\nfour")
    (patch,) = dispatch.patch_preview().files
    assert patch.status is PatchFileStatus.MODIFIED
    assert "-two\n+TWO\n" in patch.diff
    assert "+four\n\\ No newline at end of file\n" in patch.diff
    assert patch.size_bytes == len("one\nTWO\nthree\nfour")
    # The diff is a real patch: applied to the original it gives the current file.
    copy = tmp_path / "apply"
    copy.mkdir()
    (copy / "f.txt").write_text(original)
    applied = await asyncio.to_thread(
        subprocess.run,
        ["patch", "-p1", "--quiet"],
        cwd=copy,
        input=patch.diff,
        text=True,
        capture_output=True,
        timeout=30,
    )
    assert applied.returncode == 0, applied.stderr
    assert (copy / "f.txt").read_text() == "one\nTWO\nthree\nfour"


async def test_a_deleted_file_shows_as_deleted_with_size_zero(
    dispatch: ToolDispatch, workspace: Path
) -> None:
    (workspace / "old.txt").write_text("bye\n")
    await run(dispatch, "DeleteFile", path="old.txt")
    (patch,) = dispatch.patch_preview().files
    assert patch.status is PatchFileStatus.DELETED
    assert patch.size_bytes == 0
    assert patch.diff.splitlines()[:2] == ["--- a/old.txt", "+++ /dev/null"]
    assert "-bye" in patch.diff


async def test_a_file_created_then_deleted_disappears(dispatch: ToolDispatch) -> None:
    await run(dispatch, "WriteFile", path="tmp.txt", content="scratch")
    await run(dispatch, "DeleteFile", path="tmp.txt")
    assert dispatch.patch_preview().files == []


async def test_a_file_restored_to_its_original_disappears(dispatch: ToolDispatch, workspace: Path) -> None:
    (workspace / "cfg.ini").write_text("x=1\n")
    await run(dispatch, "WriteFile", path="cfg.ini", content="x=2\n")
    assert len(dispatch.patch_preview().files) == 1
    await run(dispatch, "WriteFile", path="cfg.ini", content="x=1\n")
    assert dispatch.patch_preview().files == []


async def test_a_deleted_then_recreated_file_is_modified_against_its_original(
    dispatch: ToolDispatch, workspace: Path
) -> None:
    (workspace / "r.txt").write_text("before\n")
    await run(dispatch, "DeleteFile", path="r.txt")
    await run(dispatch, "WriteFile", path="r.txt", content="after\n")
    (patch,) = dispatch.patch_preview().files
    assert patch.status is PatchFileStatus.MODIFIED
    assert "-before\n+after\n" in patch.diff


async def test_the_preview_can_be_filtered_to_the_files_one_task_touched(dispatch: ToolDispatch) -> None:
    await run(dispatch, "WriteFile", task_id="task-1", path="a.txt", content="a")
    await run(dispatch, "WriteFile", task_id="task-2", path="b.txt", content="b")
    await run(dispatch, "WriteFile", task_id="task-2", path="a.txt", content="aa")
    assert set(by_path(dispatch.patch_preview())) == {"a.txt", "b.txt"}
    assert set(by_path(dispatch.patch_preview("task-1"))) == {"a.txt"}
    assert set(by_path(dispatch.patch_preview("task-2"))) == {"a.txt", "b.txt"}
    assert dispatch.patch_preview("task-3").files == []


async def test_a_binary_file_change_is_summarised_not_diffed(dispatch: ToolDispatch, workspace: Path) -> None:
    (workspace / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    await run(dispatch, "WriteFile", path="logo.png", content="now text\n")
    (patch,) = dispatch.patch_preview().files
    assert patch.status is PatchFileStatus.MODIFIED
    assert patch.diff == "Binary files a/logo.png and b/logo.png differ\n"


async def test_a_file_too_large_to_diff_is_summarised_and_a_revert_still_recognised(
    router: LocalToolRouter, workspace: Path
) -> None:
    from agent_runtime.agent_host.routing.paths import resolve_root

    roots = [resolve_root(str(workspace))]
    dispatch = ToolDispatch(
        router, workspace_roots=roots, uploader=None, patches=PatchTracker(roots=roots, max_diff_bytes=100)
    )
    big = "line\n" * 100
    (workspace / "big.txt").write_text(big)
    await run(dispatch, "WriteFile", path="big.txt", content=big + "more\n")
    (patch,) = dispatch.patch_preview().files
    assert "binary or large file changed" in patch.diff
    assert "500 bytes before, 505 bytes after" in patch.diff
    await run(dispatch, "WriteFile", path="big.txt", content=big)
    assert dispatch.patch_preview().files == []


async def test_files_changed_outside_the_tools_are_not_listed(
    dispatch: ToolDispatch, workspace: Path
) -> None:
    (workspace / "untouched.txt").write_text("x")
    await run(dispatch, "ReadFile", path="untouched.txt")
    (workspace / "untouched.txt").write_text("changed by someone else")
    assert dispatch.patch_preview().files == []


async def test_a_file_outside_the_workspace_is_labelled_by_its_absolute_path(
    dispatch: ToolDispatch, outside: Path
) -> None:
    await run(dispatch, "WriteFile", path=str(outside / "o.txt"), content="o\n")
    (patch,) = dispatch.patch_preview().files
    label = str(outside / "o.txt").lstrip("/")
    assert f"+++ b/{label}" in patch.diff


async def test_invalid_utf8_text_is_shown_with_replacement_characters(
    dispatch: ToolDispatch, workspace: Path
) -> None:
    (workspace / "latin.txt").write_bytes("café\n".encode("latin-1"))
    await run(dispatch, "WriteFile", path="latin.txt", content="cafe\n")
    (patch,) = dispatch.patch_preview().files
    assert "-caf\ufffd\n" in patch.diff
    PatchPreview.model_validate_json(dispatch.patch_preview().model_dump_json())  # survives the wire


def test_a_fifo_is_never_opened_by_the_tracker(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    tracker = PatchTracker(roots=[str(tmp_path)])
    tracker.touch(str(fifo), "task-1")  # would block forever if it opened the FIFO for reading
    assert tracker.paths == []


def test_originals_past_the_memory_budget_keep_only_their_hash(tmp_path: Path) -> None:
    tracker = PatchTracker(roots=[str(tmp_path)], memory_budget=10)
    for name in ("a.txt", "b.txt"):
        (tmp_path / name).write_text("12345678\n")
        tracker.touch(str(tmp_path / name), "task-1")
    (tmp_path / "a.txt").write_text("changed\n")
    (tmp_path / "b.txt").write_text("changed\n")
    diffs = {Path(f.path).name: f.diff for f in tracker.preview().files}
    assert "-12345678" in diffs["a.txt"]  # kept: within the budget
    assert "binary or large file changed" in diffs["b.txt"]  # past it: summarised
    (tmp_path / "b.txt").write_text("12345678\n")
    assert [Path(f.path).name for f in tracker.preview().files] == ["a.txt"]  # the hash saw the revert


async def test_a_symlink_deleted_by_the_session_shows_its_link_target_removed(
    dispatch: ToolDispatch, workspace: Path, outside: Path
) -> None:
    (outside / "target.txt").write_text("kept\n")
    (workspace / "link").symlink_to(outside / "target.txt")
    await run(dispatch, "DeleteFile", path="link")
    (patch,) = dispatch.patch_preview().files
    assert patch.status is PatchFileStatus.DELETED
    assert str(outside / "target.txt") in patch.diff
    assert (outside / "target.txt").read_text() == "kept\n"


def test_diffs_too_large_for_one_answer_are_summarised_by_line_counts(tmp_path: Path) -> None:
    tracker = PatchTracker(roots=[str(tmp_path)], max_file_diff_bytes=2_000, max_preview_diff_bytes=2_000)
    for name in ("a.txt", "b.txt", "c.txt"):
        (tmp_path / name).write_text("".join(f"-- old line {n}\n" for n in range(40)))
        tracker.touch(str(tmp_path / name), "task-1")
    (tmp_path / "a.txt").write_text("".join(f"new line {n}\n" for n in range(40)))  # ~1 KB: shown
    (tmp_path / "b.txt").write_text("".join(f"new line {n}\n" for n in range(40)))  # fits no more
    (tmp_path / "c.txt").write_text("".join(f"another {n}\n" for n in range(200)))  # too big alone
    diffs = {Path(f.path).name: f.diff for f in tracker.preview().files}
    assert diffs["a.txt"].startswith("--- a/a.txt\n+++ b/a.txt\n@@")
    assert "past the preview's size limit: +40 -40 lines" in diffs["b.txt"]
    assert "too large to show: +200 -40 lines" in diffs["c.txt"]


# ---------------------------------------------------------------- the diff an approval request shows


def test_an_approval_shows_the_diff_the_write_would_make_before_anything_is_written(
    dispatch: ToolDispatch, workspace: Path
) -> None:
    (workspace / "f.txt").write_text("one\ntwo\n")
    ids = {"session_id": "sess-1", "task_id": "task-1", "step_id": "step-1"}
    write = dispatch.prepare(tool_call("WriteFile", path="f.txt", content="one\n2\n"), **ids)
    diff = dispatch.proposed_diff(write)
    assert diff is not None
    assert diff.splitlines() == ["--- a/f.txt", "+++ b/f.txt", "@@ -1,2 +1,2 @@", " one", "-two", "+2"]
    assert (workspace / "f.txt").read_text() == "one\ntwo\n"
    delete = dispatch.prepare(tool_call("DeleteFile", path="f.txt"), **ids)
    assert (dispatch.proposed_diff(delete) or "").splitlines()[:2] == ["--- a/f.txt", "+++ /dev/null"]
    read = dispatch.prepare(tool_call("ReadFile", path="f.txt"), **ids)
    assert dispatch.proposed_diff(read) is None


def test_an_approval_diff_too_large_to_show_is_summarised(dispatch: ToolDispatch) -> None:
    ids = {"session_id": "sess-1", "task_id": "task-1", "step_id": "step-1"}
    content = "".join(f"line {i}\n" for i in range(60_000))
    diff = dispatch.proposed_diff(
        dispatch.prepare(tool_call("WriteFile", path="big.txt", content=content), **ids)
    )
    assert diff == (
        "Files /dev/null and b/big.txt differ"
        " (the diff is 708,938 bytes, too large to show: +60,000 -0 lines)\n"
    )
