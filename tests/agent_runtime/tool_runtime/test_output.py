"""Output formatting (seed 003 §7): truncation, bounded capture, artifacts, CRLF handling."""

from __future__ import annotations

import errno
import random
from pathlib import Path

import pytest

from agent_runtime.tool_runtime.errors import describe_os_error
from agent_runtime.tool_runtime.output import Capture, HeadTail, Spool, marker, truncate_text
from agent_runtime.tool_runtime.tools.file.common import os_failure
from agent_runtime.tool_runtime.tools.shell.capture import StreamCapture, split_budget_between
from contracts.enums import ArtifactType
from contracts.errors import ErrorCode


def test_text_within_the_limit_is_unchanged() -> None:
    assert truncate_text("hello", 5) == "hello"


def test_truncation_keeps_80_percent_head_and_20_percent_tail_with_the_marker() -> None:
    text = "".join(chr(ord("a") + n % 26) for n in range(1000))
    assert truncate_text(text, 100) == text[:80] + "\n[... truncated 900 bytes ...]\n" + text[-20:]
    assert marker(7) == "\n[... truncated 7 bytes ...]\n"


def test_truncation_never_splits_a_character() -> None:
    text = "é" * 100  # two bytes each
    head, tail = truncate_text(text, 51).split("\n[... truncated ")
    assert set(head) == {"é"}
    assert len(head) == 20
    assert set(tail.split("...]\n")[1]) <= {"é"}


@pytest.mark.parametrize("seed", range(25))
def test_head_tail_renders_what_whole_text_truncation_would(seed: int) -> None:
    rng = random.Random(seed)
    data = bytes(rng.choice(b"abcdef\n") for _ in range(rng.randint(0, 5000)))
    max_bytes = rng.randint(1, 3000)
    kept = HeadTail(max_bytes)
    position = 0
    while position < len(data):
        step = rng.randint(1, 700)
        kept.feed(data[position : position + step])
        position += step
    assert kept.total == len(data)
    assert kept.retained <= 2 * max_bytes + 700
    for budget in {max_bytes, max(1, max_bytes // 3)}:
        assert kept.render(budget) == truncate_text(data.decode(), budget)


def test_head_tail_memory_stays_bounded_for_a_long_stream() -> None:
    kept = HeadTail(1000)
    for _ in range(10_000):
        kept.feed(b"x" * 4096)
    assert kept.retained <= 2 * 1000 + 4096
    assert kept.render().endswith("x" * 200)


def test_invalid_utf8_in_output_is_replaced_not_raised() -> None:
    kept = HeadTail(100)
    kept.feed(b"ok \xff\xfe bytes")
    assert kept.render() == "ok \ufffd\ufffd bytes"


@pytest.mark.parametrize(
    ("limit", "first", "second", "split"),
    [(100, 30, 40, (30, 40)), (100, 20, 500, (20, 80)), (100, 500, 10, (90, 10)), (100, 500, 500, (50, 50))],
)
def test_two_streams_share_the_output_budget(
    limit: int, first: int, second: int, split: tuple[int, int]
) -> None:
    assert split_budget_between(limit, first, second) == split


@pytest.mark.parametrize("cut", range(1, 12))
def test_crlf_split_across_reads_becomes_one_lf(cut: int) -> None:
    data = b"a\r\nbc\r\n\r\nd\re\r"
    capture = StreamCapture(1000)
    capture.feed(data[:cut])
    capture.feed(data[cut:])
    capture.close()
    assert capture.kept.render() == "a\nbc\n\nd\re\r"


def test_a_stream_past_10kb_is_spooled_whole(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "spool")
    capture = Capture(100, spool=spool, name="stdout")
    payload = b"".join(b"%05d\n" % n for n in range(5000))
    for offset in range(0, len(payload), 333):
        capture.feed(payload[offset : offset + 333])
    capture.close()
    artifact = capture.artifact(ArtifactType.TOOL_OUTPUT, "text/plain")
    assert artifact is not None
    assert artifact.data_path is not None
    assert Path(artifact.data_path).read_bytes() == payload
    assert artifact.size_bytes == len(payload)


def test_a_stream_under_10kb_has_no_artifact(tmp_path: Path) -> None:
    capture = Capture(100, spool=Spool(tmp_path))
    capture.feed(b"x" * 10 * 1024)
    capture.close()
    assert capture.artifact(ArtifactType.TOOL_OUTPUT, "text/plain") is None
    assert list(tmp_path.iterdir()) == []


def test_a_spooled_artifact_stops_at_its_cap_and_says_so(tmp_path: Path) -> None:
    capture = Capture(100, spool=Spool(tmp_path), name="stdout", artifact_cap=20_000)
    for _ in range(100):
        capture.feed(b"z" * 1000)
    capture.close()
    artifact = capture.artifact(ArtifactType.TOOL_OUTPUT, "text/plain")
    assert artifact is not None
    assert artifact.artifact_name == "stdout (first 20000 of 100000 bytes).txt"
    assert artifact.data_path is not None
    content = Path(artifact.data_path).read_bytes()
    assert content.startswith(b"z" * 20_000)
    assert content[20_000:] == b"\n[... artifact cut at 20000 bytes; the output was 100000 bytes ...]\n"


def test_a_spool_given_a_directory_removes_only_its_own_files(tmp_path: Path) -> None:
    (tmp_path / "unrelated-file.txt").write_text("keep")
    spool = Spool(tmp_path)
    path = spool.write_text("diff", ".diff", "content")
    spool.close()
    assert not path.exists()
    assert (tmp_path / "unrelated-file.txt").exists()


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (FileNotFoundError(errno.ENOENT, "x"), ErrorCode.FILE_NOT_FOUND),
        (PermissionError(errno.EACCES, "x"), ErrorCode.PERMISSION_DENIED),
        (OSError(errno.EROFS, "x"), ErrorCode.PERMISSION_DENIED),
        (OSError(errno.EIO, "x"), ErrorCode.PERMISSION_DENIED),
    ],
)
def test_os_errors_map_to_the_seeds_codes_in_our_own_words(error: OSError, code: ErrorCode) -> None:
    failure = os_failure(error, "read", "/p")
    assert failure.code is code
    assert "x" not in failure.message.replace("/p", "")


def test_os_error_descriptions_never_use_the_platforms_text() -> None:
    assert describe_os_error(OSError(errno.EACCES, "Zugriff verweigert")) == "permission denied"
    assert describe_os_error(OSError(errno.EOVERFLOW, "Wert zu groß")) == "operating system error EOVERFLOW"
