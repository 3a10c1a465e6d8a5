"""WriteFile (seed 003 §4.2, §7.2): atomic writes, directories, permissions, the file_diff artifact."""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from pathlib import Path

import pytest

from agent_runtime.tool_runtime import LocalToolRouter
from contracts.enums import ArtifactType
from contracts.errors import ErrorCode
from contracts.tools import ToolScope
from tests.agent_runtime.tool_runtime.support import call, failed_with, ok
from tests.conftest import REPO_ROOT


async def test_a_new_file_is_written_and_reported(router: LocalToolRouter, workspace: Path) -> None:
    target = workspace / "new.txt"
    result = await router.execute(call("WriteFile", path=str(target), content="héllo\n"))
    assert ok(result) == f"Wrote 7 bytes to {target}"
    assert target.read_text() == "héllo\n"


async def test_parent_directories_are_created_by_default(router: LocalToolRouter, workspace: Path) -> None:
    target = workspace / "a" / "b" / "c.txt"
    ok(await router.execute(call("WriteFile", path=str(target), content="deep")))
    assert target.read_text() == "deep"


async def test_without_create_directories_a_missing_parent_is_file_not_found(
    router: LocalToolRouter, workspace: Path
) -> None:
    result = await router.execute(
        call("WriteFile", path=str(workspace / "a" / "c.txt"), content="x", createDirectories=False)
    )
    assert failed_with(result, ErrorCode.FILE_NOT_FOUND)
    assert not (workspace / "a").exists()


async def test_the_diff_artifact_shows_before_and_after(router: LocalToolRouter, workspace: Path) -> None:
    target = workspace / "src" / "app.py"
    target.parent.mkdir()
    target.write_text("a = 1\nb = 2\n")
    result = await router.execute(call("WriteFile", path=str(target), content="a = 1\nb = 3\n"))
    ok(result)
    (artifact,) = result.artifacts
    assert artifact.artifact_type is ArtifactType.FILE_DIFF
    assert artifact.text == "--- a/src/app.py\n+++ b/src/app.py\n@@ -1,2 +1,2 @@\n a = 1\n-b = 2\n+b = 3\n"


async def test_a_new_files_diff_adds_every_line(router: LocalToolRouter, workspace: Path) -> None:
    result = await router.execute(call("WriteFile", path=str(workspace / "n.txt"), content="x\ny"))
    assert result.artifacts[0].text == (
        "--- a/n.txt\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n\\ No newline at end of file\n"
    )


async def test_an_unchanged_file_has_no_diff(router: LocalToolRouter, workspace: Path) -> None:
    (workspace / "same.txt").write_text("same")
    result = await router.execute(call("WriteFile", path=str(workspace / "same.txt"), content="same"))
    assert ok(result).endswith("(content unchanged)")
    assert result.artifacts == []


async def test_a_diff_over_10kb_is_spooled_to_a_file(router: LocalToolRouter, workspace: Path) -> None:
    content = "".join(f"line {n}\n" for n in range(3000))
    result = await router.execute(call("WriteFile", path=str(workspace / "big.txt"), content=content))
    (artifact,) = result.artifacts
    assert artifact.text is None
    assert artifact.data_path is not None
    diff = Path(artifact.data_path).read_text()
    assert diff.startswith("--- a/big.txt\n+++ b/big.txt\n")
    assert artifact.size_bytes == len(diff.encode())


async def test_a_binary_file_gets_a_one_line_diff(router: LocalToolRouter, workspace: Path) -> None:
    (workspace / "img.bin").write_bytes(b"\x00\x01\x02")
    result = await router.execute(call("WriteFile", path=str(workspace / "img.bin"), content="text now"))
    assert result.artifacts[0].text == "Binary files a/img.bin and b/img.bin differ\n"


async def test_an_existing_files_permissions_are_kept(router: LocalToolRouter, workspace: Path) -> None:
    script = workspace / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o751)
    ok(await router.execute(call("WriteFile", path=str(script), content="#!/bin/sh\necho hi\n")))
    assert stat.S_IMODE(script.stat().st_mode) == 0o751


async def test_a_new_file_gets_the_usual_umask_mode(router: LocalToolRouter, workspace: Path) -> None:
    old = os.umask(0o022)
    try:
        ok(await router.execute(call("WriteFile", path=str(workspace / "m.txt"), content="x")))
    finally:
        os.umask(old)
    assert stat.S_IMODE((workspace / "m.txt").stat().st_mode) == 0o644


async def test_writing_through_a_symlink_writes_its_target(router: LocalToolRouter, workspace: Path) -> None:
    (workspace / "real.txt").write_text("old")
    (workspace / "link.txt").symlink_to(workspace / "real.txt")
    ok(await router.execute(call("WriteFile", path=str(workspace / "link.txt"), content="new")))
    assert (workspace / "link.txt").is_symlink()
    assert (workspace / "real.txt").read_text() == "new"


async def test_no_temp_file_is_left_behind(router: LocalToolRouter, workspace: Path) -> None:
    for n in range(3):
        ok(await router.execute(call("WriteFile", path=str(workspace / "f.txt"), content=f"v{n}")))
    assert sorted(p.name for p in workspace.iterdir()) == ["f.txt"]


async def test_a_directory_path_is_invalid_request(router: LocalToolRouter, workspace: Path) -> None:
    result = await router.execute(call("WriteFile", path=str(workspace), content="x"))
    assert failed_with(result, ErrorCode.INVALID_REQUEST)


async def test_a_parent_that_is_a_file_is_invalid_request(router: LocalToolRouter, workspace: Path) -> None:
    (workspace / "file").write_text("x")
    result = await router.execute(call("WriteFile", path=str(workspace / "file" / "child.txt"), content="x"))
    assert failed_with(result, ErrorCode.INVALID_REQUEST)


async def test_content_over_the_size_limit_is_file_too_large(
    router: LocalToolRouter, workspace: Path
) -> None:
    result = await router.execute(
        call(
            "WriteFile", scope=ToolScope(max_file_size_bytes=10), path=str(workspace / "x"), content="y" * 11
        )
    )
    assert failed_with(result, ErrorCode.FILE_TOO_LARGE)
    assert not (workspace / "x").exists()


async def test_content_with_a_lone_surrogate_is_invalid_request(
    router: LocalToolRouter, workspace: Path
) -> None:
    result = await router.execute(call("WriteFile", path=str(workspace / "x"), content="bad \ud800 text"))
    assert failed_with(result, ErrorCode.INVALID_REQUEST)
    assert result.error is not None
    assert result.error.message.startswith("arguments.content")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
async def test_a_read_only_directory_is_permission_denied(router: LocalToolRouter, workspace: Path) -> None:
    locked = workspace / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        result = await router.execute(call("WriteFile", path=str(locked / "x.txt"), content="x"))
    finally:
        locked.chmod(0o700)
    assert failed_with(result, ErrorCode.PERMISSION_DENIED)


async def test_climbing_out_with_dotdot_is_refused(router: LocalToolRouter, workspace: Path) -> None:
    result = await router.execute(call("WriteFile", path=f"{workspace}/../evil.txt", content="x"))
    assert failed_with(result, ErrorCode.INVALID_REQUEST)
    assert not (workspace.parent / "evil.txt").exists()


# A process that writes through the real tool and is killed with SIGKILL at a chosen point: the
# hook announces the point on stdout and then blocks, so the kill lands exactly there.
_CRASHING_WRITER = r"""
import asyncio, os, sys, types
from pathlib import Path
from agent_runtime.tool_runtime import LocalToolRouter
from contracts import atomic
from contracts.tools import ToolRequest

point, target = sys.argv[1], sys.argv[2]

def announce_and_hang():
    sys.stdout.write("at " + point + "\n")
    sys.stdout.flush()
    sys.stdin.read()

def write(fd, data):
    if point == "mid-write":
        os.write(fd, bytes(data[: len(data) // 2]))
        announce_and_hang()
    return os.write(fd, data)

def fsync(fd):
    os.fsync(fd)
    if point == "after-fsync":
        announce_and_hang()

def replace(src, dst):
    os.replace(src, dst)
    if point == "after-rename":
        announce_and_hang()

hooked = types.SimpleNamespace(**{name: getattr(os, name) for name in dir(os) if not name.startswith("__")})
hooked.write, hooked.fsync, hooked.replace = write, fsync, replace
atomic.os = hooked

async def main():
    router = LocalToolRouter(workspace_root=Path(target).parent)
    request = ToolRequest(
        tool_name="WriteFile", arguments={"path": target, "content": "NEW" * 500_000},
        session_id="s", task_id="t", step_id="p",
    )
    await router.execute(request)

asyncio.run(main())
"""


@pytest.mark.parametrize("point", ["mid-write", "after-fsync", "after-rename"])
async def test_a_crash_mid_write_leaves_the_file_wholly_old_or_wholly_new(
    workspace: Path, point: str
) -> None:
    target = workspace / "precious.txt"
    target.write_text("OLD" * 1000)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        _CRASHING_WRITER,
        point,
        str(target),
        cwd=REPO_ROOT,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None
    try:
        line = await asyncio.wait_for(process.stdout.readline(), 60)
        assert line.decode().strip() == f"at {point}"
    finally:
        process.kill()
        await process.wait()
    content = target.read_text()
    if point == "after-rename":
        assert content == "NEW" * 500_000
    else:
        assert content == "OLD" * 1000
    leftovers = [p.name for p in workspace.iterdir() if p.name != "precious.txt"]
    assert all(name.startswith(".precious.txt.cowork-tmp-") for name in leftovers)
