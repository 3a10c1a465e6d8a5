"""DeleteFile (seed 003 §4.3): files and links only, never directories."""

from __future__ import annotations

from pathlib import Path

from agent_runtime.tool_runtime import LocalToolRouter
from contracts.errors import ErrorCode
from tests.agent_runtime.tool_runtime.support import call, failed_with, ok


async def test_a_file_is_deleted(router: LocalToolRouter, workspace: Path) -> None:
    target = workspace / "old.txt"
    target.write_text("x")
    assert ok(await router.execute(call("DeleteFile", path=str(target)))) == f"Deleted {target}"
    assert not target.exists()


async def test_a_missing_file_is_file_not_found(router: LocalToolRouter, workspace: Path) -> None:
    result = await router.execute(call("DeleteFile", path=str(workspace / "ghost.txt")))
    assert failed_with(result, ErrorCode.FILE_NOT_FOUND)


async def test_a_directory_is_never_deleted(router: LocalToolRouter, workspace: Path) -> None:
    (workspace / "dir").mkdir()
    (workspace / "dir" / "keep.txt").write_text("x")
    result = await router.execute(call("DeleteFile", path=str(workspace / "dir")))
    assert failed_with(result, ErrorCode.INVALID_REQUEST)
    assert result.error is not None
    assert "is a directory" in result.error.message
    assert (workspace / "dir" / "keep.txt").exists()


async def test_a_symlink_is_removed_and_its_target_kept(router: LocalToolRouter, workspace: Path) -> None:
    (workspace / "target.txt").write_text("keep")
    (workspace / "link").symlink_to(workspace / "target.txt")
    ok(await router.execute(call("DeleteFile", path=str(workspace / "link"))))
    assert not (workspace / "link").is_symlink()
    assert (workspace / "target.txt").read_text() == "keep"


async def test_a_symlink_to_a_directory_removes_only_the_link(
    router: LocalToolRouter, workspace: Path
) -> None:
    (workspace / "dir").mkdir()
    (workspace / "dir" / "keep.txt").write_text("x")
    (workspace / "dirlink").symlink_to(workspace / "dir")
    ok(await router.execute(call("DeleteFile", path=str(workspace / "dirlink"))))
    assert not (workspace / "dirlink").exists()
    assert (workspace / "dir" / "keep.txt").exists()


async def test_a_dangling_symlink_can_be_deleted(router: LocalToolRouter, workspace: Path) -> None:
    (workspace / "dangling").symlink_to(workspace / "nowhere")
    ok(await router.execute(call("DeleteFile", path=str(workspace / "dangling"))))
    assert not (workspace / "dangling").is_symlink()


async def test_climbing_out_of_the_workspace_is_refused(router: LocalToolRouter, workspace: Path) -> None:
    victim = workspace.parent / "victim.txt"
    victim.write_text("x")
    result = await router.execute(call("DeleteFile", path=f"{workspace}/../victim.txt"))
    assert failed_with(result, ErrorCode.INVALID_REQUEST)
    assert victim.exists()


async def test_a_relative_path_is_invalid_request(router: LocalToolRouter) -> None:
    result = await router.execute(call("DeleteFile", path="victim.txt"))
    assert failed_with(result, ErrorCode.INVALID_REQUEST)
