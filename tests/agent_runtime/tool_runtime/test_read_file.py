"""ReadFile (seed 003 §4.1, §6.3, §8.1)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_runtime.tool_runtime import LocalToolRouter
from contracts.errors import ErrorCode
from contracts.tools import ToolScope
from tests.agent_runtime.tool_runtime.support import call, failed_with, ok


async def read(router: LocalToolRouter, path: Path | str, **arguments: object) -> str:
    return ok(await router.execute(call("ReadFile", path=str(path), **arguments)))


async def test_a_file_reads_back_as_written(router: LocalToolRouter, workspace: Path) -> None:
    (workspace / "a.txt").write_text("one\ntwo\nthree\n")
    assert await read(router, workspace / "a.txt") == "one\ntwo\nthree\n"


async def test_offset_and_limit_select_lines_counted_from_one(
    router: LocalToolRouter, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    assert await read(router, workspace / "a.txt", offset=3, limit=2) == "line 3\nline 4\n"
    assert await read(router, workspace / "a.txt", offset=10) == "line 10\n"
    assert await read(router, workspace / "a.txt", limit=1) == "line 1\n"


async def test_an_offset_past_the_end_says_how_long_the_file_is(
    router: LocalToolRouter, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("a\nb\nc\n")
    assert await read(router, workspace / "a.txt", offset=9) == (
        "[offset 9 is past the end of the file, which has 3 lines]"
    )
    assert await read(router, workspace / "a.txt", offset=4) == (
        "[offset 4 is past the end of the file, which has 3 lines]"
    )
    assert await read(router, workspace / "a.txt", offset=3) == "c\n"


async def test_line_ranges_across_read_chunks_are_exact(router: LocalToolRouter, workspace: Path) -> None:
    lines = [f"{n:07d} " + "x" * (n % 50) + "\n" for n in range(1, 30001)]
    (workspace / "many.txt").write_text("".join(lines))
    for offset, limit in ((1, 3), (1234, 5000), (29990, 50), (8000, 1)):
        expected = "".join(lines[offset - 1 : offset - 1 + limit])
        result = await router.execute(
            call(
                "ReadFile",
                scope=ToolScope(max_output_bytes=10**7),
                path=str(workspace / "many.txt"),
                offset=offset,
                limit=limit,
            )
        )
        assert ok(result) == expected


async def test_line_endings_are_kept_as_written(router: LocalToolRouter, workspace: Path) -> None:
    (workspace / "crlf.txt").write_bytes(b"a\r\nb\r\nc")
    assert await read(router, workspace / "crlf.txt", offset=2) == "b\r\nc"


async def test_a_utf8_bom_is_stripped(router: LocalToolRouter, workspace: Path) -> None:
    (workspace / "bom.txt").write_bytes(b"\xef\xbb\xbfhello")
    assert await read(router, workspace / "bom.txt") == "hello"


async def test_invalid_utf8_falls_back_to_the_os_encoding_then_latin1(
    router: LocalToolRouter, workspace: Path
) -> None:
    # 0x80 is "€" in cp1252 (Windows) and "Ä" in mac_roman; on Linux with a UTF-8 locale, latin-1.
    (workspace / "legacy.txt").write_bytes("café ".encode("latin-1") + b"\x80")
    text = await read(router, workspace / "legacy.txt")
    assert text.startswith("café ")


async def test_an_explicit_encoding_is_used(router: LocalToolRouter, workspace: Path) -> None:
    (workspace / "wide.txt").write_bytes("grüße\n".encode("utf-16"))
    assert await read(router, workspace / "wide.txt", encoding="utf-16") == "grüße\n"


@pytest.mark.parametrize("encoding", ["klingon", "base64", "rot13", "zlib"])
async def test_an_unknown_or_non_text_encoding_is_invalid_request(
    router: LocalToolRouter, workspace: Path, encoding: str
) -> None:
    (workspace / "a.txt").write_text("x")
    result = await router.execute(call("ReadFile", path=str(workspace / "a.txt"), encoding=encoding))
    assert failed_with(result, ErrorCode.INVALID_REQUEST)
    assert result.error is not None
    assert result.error.message.startswith("arguments.encoding is not a known text encoding")


async def test_a_binary_file_is_described_not_dumped(router: LocalToolRouter, workspace: Path) -> None:
    (workspace / "blob.bin").write_bytes(b"\x7fELF\x00\x01\x02" + bytes(1000))
    assert await read(router, workspace / "blob.bin") == "Binary file, 1007 bytes"


async def test_a_missing_file_is_file_not_found(router: LocalToolRouter, workspace: Path) -> None:
    result = await router.execute(call("ReadFile", path=str(workspace / "nope.txt")))
    assert failed_with(result, ErrorCode.FILE_NOT_FOUND)


async def test_a_file_over_the_scopes_size_limit_is_file_too_large(
    router: LocalToolRouter, workspace: Path
) -> None:
    (workspace / "big.txt").write_text("x" * 2000)
    result = await router.execute(
        call("ReadFile", scope=ToolScope(max_file_size_bytes=1000), path=str(workspace / "big.txt"))
    )
    assert failed_with(result, ErrorCode.FILE_TOO_LARGE)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
async def test_an_unreadable_file_is_permission_denied(router: LocalToolRouter, workspace: Path) -> None:
    secret = workspace / "secret.txt"
    secret.write_text("x")
    secret.chmod(0)
    result = await router.execute(call("ReadFile", path=str(secret)))
    assert failed_with(result, ErrorCode.PERMISSION_DENIED)


async def test_a_directory_is_invalid_request(router: LocalToolRouter, workspace: Path) -> None:
    result = await router.execute(call("ReadFile", path=str(workspace)))
    assert failed_with(result, ErrorCode.INVALID_REQUEST)
    assert result.error is not None
    assert "is a directory" in result.error.message


async def test_devices_and_pipes_are_refused_without_blocking(
    router: LocalToolRouter, workspace: Path
) -> None:
    fifo = workspace / "pipe"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/zero")):
        result = await router.execute(call("ReadFile", path=str(path)))
        assert failed_with(result, ErrorCode.INVALID_REQUEST)
        assert result.error is not None
        assert "not a regular file" in result.error.message


async def test_a_symlink_is_read_through_to_its_target(router: LocalToolRouter, workspace: Path) -> None:
    (workspace / "target.txt").write_text("target content")
    (workspace / "link.txt").symlink_to(workspace / "target.txt")
    assert await read(router, workspace / "link.txt") == "target content"


@pytest.mark.parametrize(
    ("path", "problem"),
    [
        ("relative/a.txt", "must be an absolute path"),
        ("./a.txt", "must be an absolute path"),
        ("/tmp/a\x00.txt", "must not contain NUL bytes"),
        ("/" + "a" * 300, "has a name longer than 255 characters"),
        ("/" + "/".join(["abcdefgh"] * 500), "this OS allows at most"),
        ("~otheruser/.ssh/id_rsa", "another account's home folder"),
    ],
)
async def test_bad_paths_are_invalid_request_naming_the_problem(
    router: LocalToolRouter, path: str, problem: str
) -> None:
    result = await router.execute(call("ReadFile", path=path))
    assert failed_with(result, ErrorCode.INVALID_REQUEST)
    assert result.error is not None
    assert result.error.message.startswith("arguments.path")
    assert problem in result.error.message


async def test_climbing_out_of_the_workspace_with_dotdot_is_refused(
    router: LocalToolRouter, workspace: Path
) -> None:
    result = await router.execute(call("ReadFile", path=f"{workspace}/../../../etc/passwd"))
    assert failed_with(result, ErrorCode.INVALID_REQUEST)
    assert result.error is not None
    assert "climbs out of the workspace" in result.error.message


async def test_dotdot_through_a_symlink_that_lands_outside_is_refused(
    router: LocalToolRouter, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside" / "deep"
    outside.mkdir(parents=True)
    (tmp_path / "outside" / "secret.txt").write_text("secret")
    (workspace / "link").symlink_to(outside)
    # Lexically <workspace>/secret.txt; the OS follows the link first and lands outside.
    result = await router.execute(call("ReadFile", path=f"{workspace}/link/../secret.txt"))
    assert failed_with(result, ErrorCode.INVALID_REQUEST)


async def test_dotdot_that_stays_inside_the_workspace_is_fine(
    router: LocalToolRouter, workspace: Path
) -> None:
    (workspace / "sub").mkdir()
    (workspace / "a.txt").write_text("inside")
    assert await read(router, f"{workspace}/sub/../a.txt") == "inside"


async def test_an_absolute_path_outside_the_workspace_is_left_to_the_policy(
    router: LocalToolRouter, tmp_path: Path
) -> None:
    (tmp_path / "elsewhere.txt").write_text("allowed by policy, not by us")
    assert await read(router, tmp_path / "elsewhere.txt") == "allowed by policy, not by us"


async def test_the_home_directory_is_expanded(
    router: LocalToolRouter, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(workspace))
    (workspace / "notes.txt").write_text("at home")
    assert await read(router, "~/notes.txt") == "at home"


async def test_output_past_the_limit_keeps_head_and_tail(router: LocalToolRouter, workspace: Path) -> None:
    (workspace / "log.txt").write_text("".join(f"{n:05d}\n" for n in range(20000)))
    text = ok(
        await router.execute(
            call("ReadFile", scope=ToolScope(max_output_bytes=1000), path=str(workspace / "log.txt"))
        )
    )
    head, tail = text.split("\n[... truncated 119000 bytes ...]\n")
    assert head.startswith("00000\n")
    assert len(head.encode()) == 800
    assert tail.endswith("19999\n")
    assert len(tail.encode()) == 200


async def test_a_huge_single_line_file_is_read_in_bounded_memory(
    router: LocalToolRouter, workspace: Path
) -> None:
    big = workspace / "minified.js"
    with big.open("wb") as handle:
        for _ in range(64):
            handle.write(b"x" * (1024 * 1024))
    text = ok(await router.execute(call("ReadFile", path=str(big))))
    assert "[... truncated " in text
    assert len(text) < 110 * 1024
