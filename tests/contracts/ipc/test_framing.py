"""Newline-delimited JSON framing (contracts.ipc.framing)."""

from __future__ import annotations

import json

import pytest

from contracts.ipc.framing import FrameDecoder, FrameTooLarge, decode, encode


def test_a_message_with_newlines_in_its_strings_is_still_one_line() -> None:
    frame = encode({"text": "line one\nline two\r\n\u2028end"})
    assert frame.count(b"\n") == 1
    assert frame.endswith(b"\n")
    assert decode(frame[:-1]) == {"text": "line one\nline two\r\n\u2028end"}


def test_frames_split_across_reads_are_reassembled() -> None:
    decoder = FrameDecoder()
    stream = encode({"a": 1}) + encode({"b": "ü" * 10}) + encode([1, 2])
    frames: list[bytes] = []
    for i in range(len(stream)):
        frames += decoder.feed(stream[i : i + 1])
    assert [json.loads(f) for f in frames] == [{"a": 1}, {"b": "ü" * 10}, [1, 2]]
    assert decoder.pending_bytes == 0


def test_blank_lines_are_ignored_and_a_partial_frame_is_reported_as_pending() -> None:
    decoder = FrameDecoder()
    assert decoder.feed(b"\n\r\n" + encode(1) + b'{"half":') == [b"1"]
    assert decoder.pending_bytes == len(b'{"half":')


def test_a_line_longer_than_the_limit_is_refused_before_it_is_complete() -> None:
    decoder = FrameDecoder(max_frame_bytes=10)
    with pytest.raises(FrameTooLarge, match="larger than 10 bytes"):
        decoder.feed(b"x" * 11)


def test_a_long_complete_line_is_refused_too() -> None:
    decoder = FrameDecoder(max_frame_bytes=10)
    with pytest.raises(FrameTooLarge):
        decoder.feed(b"x" * 20 + b"\n")


@pytest.mark.parametrize(
    "text", [b"NaN", b"[Infinity]", b"\xff\xfe[]", b"[" * 50_000 + b"]" * 50_000, b'"\xed\xa0\x80"']
)
def test_decoding_refuses_what_is_not_standard_utf8_json(text: bytes) -> None:
    with pytest.raises(ValueError):  # noqa: PT011 - each input fails for its own reason
        decode(text)


def test_encoding_refuses_nan() -> None:
    with pytest.raises(ValueError, match="not JSON compliant"):
        encode(float("nan"))
