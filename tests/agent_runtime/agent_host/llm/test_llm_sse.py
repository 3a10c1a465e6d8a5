"""The SSE decoder on the inputs the specification allows and on hostile ones."""

from __future__ import annotations

import pytest

from agent_runtime.agent_host.llm import LlmProtocolError
from agent_runtime.agent_host.llm.sse import SseDecoder, SseEvent


def decode(*chunks: bytes, max_event_chars: int = 1024) -> tuple[list[SseEvent], bool]:
    decoder = SseDecoder(max_event_chars)
    events = [event for chunk in chunks for event in decoder.feed(chunk)]
    events += decoder.finish()
    return events, decoder.pending


def feed_all(decoder: SseDecoder, chunks: list[bytes]) -> None:
    for chunk in chunks:
        decoder.feed(chunk)


@pytest.mark.parametrize("end", [b"\n", b"\r\n", b"\r"])
def test_every_line_ending_the_specification_allows_ends_lines(end: bytes) -> None:
    raw = b"event: first" + end + b"data: one" + end + end + b"data: two" + end + end
    events, pending = decode(raw)
    assert events == [SseEvent("first", "one"), SseEvent("message", "two")]
    assert not pending


def test_a_crlf_split_across_chunks_is_one_line_end_not_two() -> None:
    events, _ = decode(b"data: one\r", b"\n\r", b"\ndata: two\r\n\r\n")
    assert events == [SseEvent("message", "one"), SseEvent("message", "two")]


def test_events_split_byte_by_byte_decode_the_same() -> None:
    raw = "event: e\r\ndata: héllo ✓\r\ndata: line 2\r\n\r\n".encode()
    events, _ = decode(*[raw[i : i + 1] for i in range(len(raw))])
    assert events == [SseEvent("e", "héllo ✓\nline 2")]


def test_multi_line_data_joins_with_newlines() -> None:
    events, _ = decode(b"data: a\ndata:b\ndata\ndata:  c\n\n")
    assert events == [SseEvent("message", "a\nb\n\n c")]


def test_comments_and_pings_are_skipped_and_empty_events_are_not_dispatched() -> None:
    events, _ = decode(b": ping\n\n:\n\nevent: nothing\n\nretry: 10\nunknown: x\ndata: real\n\n")
    assert events == [SseEvent("message", "real")]


def test_a_byte_order_mark_at_the_start_is_dropped() -> None:
    events, _ = decode(b"\xef\xbb", b"\xbfdata: x\n\n")
    assert events == [SseEvent("message", "x")]


def test_the_id_field_is_kept_and_carried_over() -> None:
    events, _ = decode(b"id: 7\ndata: a\n\ndata: b\n\n")
    assert [event.id for event in events] == ["7", "7"]


def test_invalid_utf8_is_replaced_not_fatal() -> None:
    events, _ = decode(b"data: \xff\xfe ok\n\n")
    assert events == [SseEvent("message", "\ufffd\ufffd ok")]


def test_an_event_without_its_blank_line_at_the_end_is_not_dispatched_and_is_reported() -> None:
    events, pending = decode(b"data: complete\n\ndata: partial\n")
    assert events == [SseEvent("message", "complete")]
    assert pending


def test_an_unfinished_line_at_the_end_is_reported_as_pending() -> None:
    events, pending = decode(b"data: complete\n\ndata: half")
    assert events == [SseEvent("message", "complete")]
    assert pending


def test_a_trailing_cr_at_the_very_end_still_ends_the_event() -> None:
    events, pending = decode(b"data: x\r\r")
    assert events == [SseEvent("message", "x")]
    assert not pending


def test_one_huge_line_fails_clearly_once_past_the_limit() -> None:
    decoder = SseDecoder(max_event_chars=1000)
    decoder.feed(b"data: " + b"x" * 900)
    with pytest.raises(LlmProtocolError) as caught:
        decoder.feed(b"x" * 200)
    assert caught.value.shape.details["limitChars"] == 1000


def test_many_data_lines_that_never_end_the_event_fail_past_the_limit() -> None:
    decoder = SseDecoder(max_event_chars=1000)
    with pytest.raises(LlmProtocolError):
        feed_all(decoder, [b"data: 0123456789\n"] * 200)


def test_a_huge_line_arriving_in_small_chunks_costs_linear_time_and_still_fails() -> None:
    decoder = SseDecoder()  # the real 8 MiB limit
    piece = b"y" * 4096
    with pytest.raises(LlmProtocolError) as caught:
        feed_all(decoder, [piece] * 3000)  # 12 MiB in 4 KiB reads; quadratic joining would take minutes
    assert caught.value.shape.details["limitChars"] == 8 * 1024 * 1024


def test_an_event_just_under_the_limit_is_accepted() -> None:
    events, _ = decode(b"data: " + b"z" * 1000 + b"\n\n", max_event_chars=1001)
    assert len(events[0].data) == 1000
