"""The SSE decoder, as the resumption of MCP streams needs it: ids (also alone), retry, line ends."""

from __future__ import annotations

import pytest

from contracts.sse import SseDecoder, SseEvent, SseEventTooLarge


def _feed_bytewise(decoder: SseDecoder, data: bytes) -> list[SseEvent]:
    events: list[SseEvent] = []
    for index in range(len(data)):
        events.extend(decoder.feed(data[index : index + 1]))
    return events


def test_events_with_ids_retry_and_every_line_ending() -> None:
    stream = (
        b'\xef\xbb\xbfretry: 2500\r\nid: 7\r\ndata: {"a":\r\ndata: 1}\r\n\r\n'
        b": keep-alive\n\nevent: other\rdata: x\r\r: a comment after a lone CR\n"
    )
    decoder = SseDecoder()
    events = _feed_bytewise(decoder, stream)
    assert events == [SseEvent("message", '{"a":\n1}', "7"), SseEvent("other", "x", "7")]
    assert decoder.retry_ms == 2500
    assert decoder.last_event_id == "7"


def test_an_id_only_priming_event_moves_the_cursor_and_an_empty_data_event_is_dispatched() -> None:
    decoder = SseDecoder()
    assert decoder.feed(b"id: prime\n\n") == []
    assert decoder.last_event_id == "prime"
    assert decoder.feed(b"id: p2\ndata:\n\n") == [SseEvent("message", "", "p2")]


def test_an_unfinished_event_is_not_dispatched_and_state_carries_over() -> None:
    decoder = SseDecoder()
    assert decoder.feed(b"id: 3\nretry: 10\n\nid: 4\ndata: half") == []
    assert decoder.last_event_id == "3"
    resumed = SseDecoder(last_event_id=decoder.last_event_id, retry_ms=decoder.retry_ms)
    assert resumed.feed(b"data: next\n\n") == [SseEvent("message", "next", "3")]
    assert resumed.retry_ms == 10


def test_a_bad_retry_and_an_id_with_nul_are_ignored() -> None:
    decoder = SseDecoder()
    decoder.feed(b"retry: soon\nid: a\x00b\ndata: x\n\n")
    assert decoder.retry_ms is None
    assert decoder.last_event_id is None


@pytest.mark.parametrize(
    "stream", [b"data: " + b"x" * 100, b"data: " + b"x" * 60 + b"\ndata: " + b"y" * 60 + b"\n"]
)
def test_an_event_over_the_bound_raises(stream: bytes) -> None:
    with pytest.raises(SseEventTooLarge):
        SseDecoder(max_event_chars=100).feed(stream)
