"""An incremental Server-Sent Events decoder (WHATWG HTML §9.2.6, "Interpreting an event stream").

One decoder for the two clients that read event streams: the agent host's LLM client (the gateway's
streamed responses, on the streaming hot path) and the tool runtime's MCP streamable HTTP transport
(seed 003 §9). Hand-written rather than httpx-sse because both need what that library does not give:
a bound on the size of one event (a server, or whatever sits between us and it, must not be able to
make the runtime buffer without limit), bytes fed from any source (the benchmark feeds the same
decoder the client uses), a precise account of where a stream stopped (a stream ending without its
terminal event is told apart from a clean end), and the state a resumed stream needs. It follows the
specification line by line:

* lines end with ``\\r\\n``, ``\\n`` or ``\\r`` — also when a chunk boundary falls between ``\\r`` and
  ``\\n``; a leading byte-order mark is dropped; bytes are decoded as UTF-8 with replacement;
* ``:`` starts a comment (servers send them as keep-alive pings); ``field: value`` loses one leading
  space; a line without a colon is a field with an empty value; unknown fields are ignored;
* several ``data:`` lines join with ``\\n``; an empty line dispatches the event, unless no data line
  was seen; ``event:`` sets the event's name (default ``message``);
* ``id:`` fills the last-event-id buffer, which becomes :attr:`SseDecoder.last_event_id` at every
  blank line — also after a block that carries only an ``id`` (an MCP server's "priming" event),
  which is what a resuming client's ``Last-Event-ID`` must name;
* ``retry:`` with only ASCII digits sets :attr:`SseDecoder.retry_ms`, which a client resuming a
  stream MUST wait out (MCP 2025-11-25, transports);
* an incomplete event at the end of the stream is discarded (the caller learns of it through
  :attr:`SseDecoder.pending`).
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

__all__ = ["MAX_EVENT_CHARS", "SseDecoder", "SseEvent", "SseEventTooLarge"]

MAX_EVENT_CHARS = 8 * 1024 * 1024
"""The most one event (its data lines together, or a single line) may hold by default: 8 Mi characters."""

_LINE_END = re.compile(r"\r\n|\r|\n")


class SseEventTooLarge(ValueError):
    """One line or one event's data went over the decoder's bound."""


@dataclass(frozen=True, slots=True)
class SseEvent:
    event: str
    data: str
    id: str | None = None


class SseDecoder:
    """Feed bytes as they arrive; get back the events they complete.

    ``last_event_id`` and ``retry_ms`` start from what an earlier stream left (a resumed stream
    continues its predecessor's state, as an ``EventSource`` does across reconnections). Over
    ``max_event_chars`` it raises what :meth:`too_large` makes: :class:`SseEventTooLarge` here; a
    client with errors of its own overrides it.
    """

    def __init__(
        self,
        max_event_chars: int = MAX_EVENT_CHARS,
        *,
        last_event_id: str | None = None,
        retry_ms: int | None = None,
    ) -> None:
        self.last_event_id = last_event_id
        self.retry_ms = retry_ms
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
        self._id_buffer = last_event_id

    @property
    def max_event_chars(self) -> int:
        return self._max

    @property
    def pending(self) -> bool:
        """True when the bytes so far stop inside an event: an unfinished line or undispatched data."""
        return bool(self._parts or self._data or self._held_cr)

    def too_large(self, message: str) -> Exception:
        """The error for a line or an event over the bound; ``message`` says which."""
        return SseEventTooLarge(message)

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
                raise self.too_large(f"an event stream line is longer than {self._max:,} characters")
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
            # The spec sets the last event id at every blank line, before deciding whether there is
            # an event to dispatch: an id-only block still moves the cursor.
            last_id = self.last_event_id = self._id_buffer or None
            if self._data:
                events.append(SseEvent(self._event or "message", "\n".join(self._data), last_id))
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
                raise self.too_large(f"an event is larger than {self._max:,} characters")
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._id_buffer = value
        elif name == "retry" and value.isascii() and value.isdigit():
            self.retry_ms = int(value)
