"""An incremental Server-Sent Events decoder (WHATWG HTML §9.2.6, "Interpreting an event stream").

Hand-written rather than httpx-sse because the client needs three things that library does not give:
a bound on the size of one event (a gateway, or whatever sits between us and it, must not be able to
make the runtime buffer without limit), bytes fed from any source (the benchmark feeds the same
decoder the client uses), and a precise account of where a stream stopped, so that a stream ending
without its terminal event is told apart from a clean end. It is small and follows the specification
line by line:

* lines end with ``\\r\\n``, ``\\n`` or ``\\r`` — also when a chunk boundary falls between ``\\r`` and
  ``\\n``; a leading byte-order mark is dropped; bytes are decoded as UTF-8 with replacement;
* ``:`` starts a comment (servers send them as keep-alive pings); ``field: value`` loses one leading
  space; a line without a colon is a field with an empty value; unknown fields are ignored;
* several ``data:`` lines join with ``\\n``; an empty line dispatches the event, unless no data line
  was seen; ``event:`` sets the event's name (default ``message``); ``id:`` is kept; ``retry:`` is
  irrelevant to a client that does not reconnect;
* an incomplete event at the end of the stream is discarded (the caller learns of it through
  :attr:`SseDecoder.pending`).
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

from .errors import LlmProtocolError

__all__ = ["MAX_EVENT_CHARS", "SseDecoder", "SseEvent"]

MAX_EVENT_CHARS = 8 * 1024 * 1024
"""The most one event (its data lines together, or a single line) may hold: 8 Mi characters."""

_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class SseEvent:
    event: str
    data: str
    id: str | None = None


class SseDecoder:
    """Feed bytes as they arrive; get back the events they complete."""

    def __init__(self, max_event_chars: int = MAX_EVENT_CHARS) -> None:
        self._max = max_event_chars
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._first = True
        # The unfinished last line, in pieces: joining on every chunk would make a long line that
        # arrives in small chunks cost quadratic time.
        self._parts: list[str] = []
        self._parts_chars = 0
        self._held_cr = False
        self._event = ""
        self._data: list[str] = []
        self._data_chars = 0
        self._last_id: str | None = None

    @property
    def pending(self) -> bool:
        """True when the bytes so far stop inside an event: an unfinished line or undispatched data."""
        return bool(self._parts or self._data or self._held_cr)

    def feed(self, chunk: bytes) -> list[SseEvent]:
        return self._feed_text(self._decoder.decode(chunk))

    def finish(self) -> list[SseEvent]:
        """The stream ended. An event without its closing blank line is not dispatched (see
        :attr:`pending`)."""
        events = self._feed_text(self._decoder.decode(b"", final=True))
        if self._held_cr:
            self._held_cr = False
            self._line(self._take_partial(""), events)
        return events

    def _feed_text(self, text: str) -> list[SseEvent]:
        if not text:
            return []
        if self._first:
            self._first = False
            text = text.removeprefix("\ufeff")
        if self._held_cr:
            self._held_cr = False
            text = "\r" + text
        # A trailing "\r" may be the first half of "\r\n": hold it until the next chunk says.
        if text.endswith("\r"):
            text = text[:-1]
            self._held_cr = True
        lines = _LINE_END.split(text)
        events: list[SseEvent] = []
        if len(lines) > 1:
            self._line(self._take_partial(lines[0]), events)
            for line in lines[1:-1]:
                self._line(line, events)
        last = lines[-1]
        if last:
            self._parts.append(last)
            self._parts_chars += len(last)
            if self._parts_chars > self._max:
                raise self._too_large()
        return events

    def _take_partial(self, end: str) -> str:
        if not self._parts:
            return end
        self._parts.append(end)
        line = "".join(self._parts)
        self._parts = []
        self._parts_chars = 0
        return line

    def _line(self, line: str, events: list[SseEvent]) -> None:
        if not line:
            if self._data:
                events.append(SseEvent(self._event or "message", "\n".join(self._data), self._last_id))
            self._event = ""
            self._data = []
            self._data_chars = 0
            return
        if line[0] == ":":
            return
        name, colon, value = line.partition(":")
        if colon and value[:1] == " ":
            value = value[1:]
        if name == "data":
            self._data_chars += len(value) + 1
            if self._data_chars > self._max:
                raise self._too_large()
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._last_id = value

    def _too_large(self) -> LlmProtocolError:
        return LlmProtocolError(
            f"The LLM gateway sent a stream event larger than {_size(self._max)}",
            details={"limitChars": self._max},
        )


def _size(chars: int) -> str:
    if chars >= 1024 * 1024 and chars % (1024 * 1024) == 0:
        return f"{chars // (1024 * 1024)} MiB"
    return f"{chars:,} characters"
