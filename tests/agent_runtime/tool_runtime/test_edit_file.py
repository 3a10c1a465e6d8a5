"""EditFile: exact, unique replacements in a file the session has read, keeping its bytes' form."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from agent_runtime.tool_runtime import LocalToolRouter
from contracts.enums import ArtifactType
from contracts.errors import ErrorCode
from contracts.tools import ToolResult, ToolScope
from tests.agent_runtime.tool_runtime.support import call, failed_with, ok


async def read(router: LocalToolRouter, path: Path) -> str:
    return ok(await router.execute(call("ReadFile", path=str(path))))


async def edit(router: LocalToolRouter, path: Path, old: str, new: str, **more: object) -> ToolResult:
    return await router.execute(call("EditFile", path=str(path), oldString=old, newString=new, **more))


async def test_a_read_file_is_edited_once_with_a_diff_artifact(
    router: LocalToolRouter, workspace: Path
) -> None:
    target = workspace / "app.py"
    target.write_text("def f():\n    return 1\n\ndef g():\n    return 2\n")
    await read(router, target)
    result = await edit(router, target, "return 1", "return 10")
    assert ok(result) == f"Edited {target}: replaced 1 occurrence of oldString"
    assert target.read_text() == "def f():\n    return 10\n\ndef g():\n    return 2\n"
    (artifact,) = result.artifacts
    assert artifact.artifact_type is ArtifactType.FILE_DIFF
    assert artifact.artifact_name == "app.py.diff"
    assert "-    return 1\n+    return 10\n" in artifact.text
    assert artifact.text.startswith("--- a/app.py\n+++ b/app.py\n")


async def test_a_file_never_read_is_refused_and_left_alone(router: LocalToolRouter, workspace: Path) -> None:
    target = workspace / "unread.txt"
    target.write_text("alpha\n")
    result = await edit(router, target, "alpha", "beta")
    assert failed_with(result, ErrorCode.TOOL_EXECUTION_FAILED)
    assert result.error is not None
    assert "read it with ReadFile first" in result.error.message
    assert target.read_text() == "alpha\n"


async def test_a_file_changed_on_disk_since_it_was_read_is_refused(
    router: LocalToolRouter, workspace: Path
) -> None:
    target = workspace / "notes.txt"
    target.write_text("first line\nsecond line\n")
    await read(router, target)
    target.write_text("first line\nsecond line\nthe user's own addition\n")  # the user edits meanwhile
    result = await edit(router, target, "first line", "1st line")
    assert failed_with(result, ErrorCode.TOOL_EXECUTION_FAILED)
    assert "changed on disk since it was last read" in result.error.message
    assert "read it again" in result.error.message
    assert target.read_text() == "first line\nsecond line\nthe user's own addition\n"
    await read(router, target)  # after reading again the edit goes through
    ok(await edit(router, target, "first line", "1st line"))
    assert target.read_text() == "1st line\nsecond line\nthe user's own addition\n"


async def test_a_same_size_change_with_the_same_mtime_is_still_seen(
    router: LocalToolRouter, workspace: Path
) -> None:
    target = workspace / "same.txt"
    target.write_text("value = 1\n")
    await read(router, target)
    before = target.stat()
    target.write_text("value = 2\n")
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))  # coarse clocks: same mtime
    assert failed_with(await edit(router, target, "value", "amount"), ErrorCode.TOOL_EXECUTION_FAILED)
    assert target.read_text() == "value = 2\n"


async def test_successive_edits_need_no_read_in_between(router: LocalToolRouter, workspace: Path) -> None:
    target = workspace / "steps.txt"
    target.write_text("a\nb\nc\n")
    await read(router, target)
    ok(await edit(router, target, "a\n", "A\n"))
    ok(await edit(router, target, "b\n", "B\n"))
    ok(await edit(router, target, "c\n", "C\n"))
    assert target.read_text() == "A\nB\nC\n"


async def test_a_file_written_by_write_file_can_be_edited_without_reading(
    router: LocalToolRouter, workspace: Path
) -> None:
    target = workspace / "made.txt"
    ok(await router.execute(call("WriteFile", path=str(target), content="draft one\n")))
    ok(await edit(router, target, "one", "two"))
    assert target.read_text() == "draft two\n"


async def test_write_file_over_an_unread_file_still_works(router: LocalToolRouter, workspace: Path) -> None:
    target = workspace / "existing.txt"
    target.write_text("old\n")
    ok(await router.execute(call("WriteFile", path=str(target), content="new\n")))
    assert target.read_text() == "new\n"


async def test_zero_matches_say_so_and_write_nothing(router: LocalToolRouter, workspace: Path) -> None:
    target = workspace / "z.txt"
    target.write_text("hello world\n")
    await read(router, target)
    result = await edit(router, target, "goodbye", "hi")
    assert failed_with(result, ErrorCode.TOOL_EXECUTION_FAILED)
    assert "oldString was not found" in result.error.message
    assert "Nothing was written" in result.error.message
    assert target.read_text() == "hello world\n"


async def test_several_matches_say_how_many_and_on_which_lines(
    router: LocalToolRouter, workspace: Path
) -> None:
    target = workspace / "many.py"
    target.write_text("x = 1\nprint(x)\ny = 2\nprint(x)\n\nprint(x)\n")
    await read(router, target)
    result = await edit(router, target, "print(x)", "print(y)")
    assert failed_with(result, ErrorCode.TOOL_EXECUTION_FAILED)
    assert "occurs 3 times" in result.error.message
    assert "at lines 2, 4, 6" in result.error.message
    assert target.read_text() == "x = 1\nprint(x)\ny = 2\nprint(x)\n\nprint(x)\n"
    result = await edit(router, target, "print(x)", "print(y)", replaceAll=True)
    assert ok(result).endswith("replaced 3 occurrences of oldString")
    assert target.read_text() == "x = 1\nprint(y)\ny = 2\nprint(y)\n\nprint(y)\n"


async def test_crlf_line_endings_are_kept_when_the_model_writes_lf(
    router: LocalToolRouter, workspace: Path
) -> None:
    target = workspace / "win.txt"
    target.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    await read(router, target)
    ok(await edit(router, target, "one\ntwo\n", "uno\ndos\nmas\n"))
    assert target.read_bytes() == b"uno\r\ndos\r\nmas\r\nthree\r\n"


async def test_latin_1_stays_latin_1(router: LocalToolRouter, workspace: Path) -> None:
    target = workspace / "legacy.txt"
    target.write_bytes("caf\xe9 cr\xe8me\n".encode("latin-1"))
    assert await read(router, target) == "café crème\n"
    ok(await edit(router, target, "café", "thé"))
    assert target.read_bytes() == "th\xe9 cr\xe8me\n".encode("latin-1")


async def test_a_character_the_encoding_cannot_hold_is_refused(
    router: LocalToolRouter, workspace: Path
) -> None:
    target = workspace / "legacy2.txt"
    target.write_bytes("caf\xe9\n".encode("latin-1"))
    await read(router, target)
    result = await edit(router, target, "café", "咖啡")
    assert failed_with(result, ErrorCode.TOOL_EXECUTION_FAILED)
    assert "cannot hold" in result.error.message
    assert target.read_bytes() == "caf\xe9\n".encode("latin-1")


async def test_a_utf8_bom_is_kept(router: LocalToolRouter, workspace: Path) -> None:
    target = workspace / "bom.txt"
    target.write_bytes(b"\xef\xbb\xbfhello\nworld\n")
    await read(router, target)
    ok(await edit(router, target, "world", "monde"))
    assert target.read_bytes() == b"\xef\xbb\xbfhello\nmonde\n"


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permission bits")
async def test_permissions_are_kept(router: LocalToolRouter, workspace: Path) -> None:
    target = workspace / "run.sh"
    target.write_text("echo one\n")
    target.chmod(0o750)
    await read(router, target)
    ok(await edit(router, target, "one", "two"))
    assert stat.S_IMODE(target.stat().st_mode) == 0o750
    assert not [p for p in workspace.iterdir() if ".cowork-tmp-" in p.name]


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"oldString": "", "newString": "x"}, "oldString"),
        ({"newString": "x"}, "oldString"),
        ({"oldString": "x"}, "newString"),
        ({"oldString": "x", "newString": "y", "replaceAll": "yes"}, "replaceAll"),
        ({"oldString": "x", "newString": "y", "extra": 1}, "extra"),
    ],
)
async def test_bad_arguments_are_named(
    router: LocalToolRouter, workspace: Path, arguments: dict[str, object], field: str
) -> None:
    target = workspace / "f.txt"
    target.write_text("x\n")
    result = await router.execute(call("EditFile", path=str(target), **arguments))
    assert failed_with(result, ErrorCode.INVALID_REQUEST)
    assert field in result.error.message


async def test_identical_strings_and_binary_files_and_directories_are_invalid(
    router: LocalToolRouter, workspace: Path
) -> None:
    text = workspace / "t.txt"
    text.write_text("same\n")
    await read(router, text)
    assert failed_with(await edit(router, text, "same", "same"), ErrorCode.INVALID_REQUEST)
    binary = workspace / "b.bin"
    binary.write_bytes(b"abc\x00def")
    await read(router, binary)
    result = await edit(router, binary, "abc", "xyz")
    assert failed_with(result, ErrorCode.INVALID_REQUEST)
    assert "binary" in result.error.message
    assert failed_with(await edit(router, workspace, "a", "b"), ErrorCode.INVALID_REQUEST)
    assert failed_with(await edit(router, workspace / "missing.txt", "a", "b"), ErrorCode.FILE_NOT_FOUND)


async def test_the_size_limit_applies_to_the_edited_file(router: LocalToolRouter, workspace: Path) -> None:
    target = workspace / "grow.txt"
    target.write_text("x" * 50)
    await read(router, target)
    result = await router.execute(
        call(
            "EditFile",
            scope=ToolScope(max_file_size_bytes=60),
            path=str(target),
            oldString="x" * 50,
            newString="y" * 70,
        )
    )
    assert failed_with(result, ErrorCode.FILE_TOO_LARGE)
    assert target.read_text() == "x" * 50


async def test_a_deleted_file_must_be_read_again(router: LocalToolRouter, workspace: Path) -> None:
    target = workspace / "gone.txt"
    target.write_text("v1\n")
    await read(router, target)
    ok(await router.execute(call("DeleteFile", path=str(target))))
    target.write_text("v1\n")  # recreated with the same content by someone else
    assert failed_with(await edit(router, target, "v1", "v2"), ErrorCode.TOOL_EXECUTION_FAILED)


async def test_reads_are_per_router_that_is_per_session(workspace: Path, spool_dir: Path) -> None:
    target = workspace / "shared.txt"
    target.write_text("one\n")
    first = LocalToolRouter(workspace_root=workspace, spool_dir=spool_dir)
    second = LocalToolRouter(workspace_root=workspace, spool_dir=spool_dir)
    try:
        await read(first, target)
        assert failed_with(await edit(second, target, "one", "two"), ErrorCode.TOOL_EXECUTION_FAILED)
        ok(await edit(first, target, "one", "two"))
    finally:
        await first.aclose()
        await second.aclose()


async def test_an_edit_deep_in_a_large_file_gets_a_diff_with_its_real_line_numbers(
    router: LocalToolRouter, workspace: Path
) -> None:
    target = workspace / "big.py"
    target.write_text("".join(f"line_{n} = {n}\n" for n in range(1, 20_001)))
    await read(router, target)
    result = await edit(router, target, "line_12345 = 12345\n", "line_12345 = 'changed'\n")
    (artifact,) = result.artifacts
    diff = artifact.text
    assert diff is not None
    assert diff.splitlines() == [
        "--- a/big.py",
        "+++ b/big.py",
        "@@ -12342,7 +12342,7 @@",
        " line_12342 = 12342",
        " line_12343 = 12343",
        " line_12344 = 12344",
        "-line_12345 = 12345",
        "+line_12345 = 'changed'",
        " line_12346 = 12346",
        " line_12347 = 12347",
        " line_12348 = 12348",
    ]
