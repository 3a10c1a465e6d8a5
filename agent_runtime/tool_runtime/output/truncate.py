"""Head-and-tail truncation of tool output (seed 003 §7.1), over whole texts and over unbounded streams.

Kept: the first 80 % of the budget (the head: often the key output) and the last 20 % (the tail: often
the summary or exit status), with ``\\n[... truncated {omitted} bytes ...]\\n`` between them. Budgets and
counts are UTF-8 bytes. The seed's §4.4 marker says something else; §7.1's is the one used everywhere.
"""

from __future__ import annotations

__all__ = ["HEAD_FRACTION", "HeadTail", "marker", "truncate_text"]

HEAD_FRACTION = 0.8


def marker(omitted: int) -> str:
    return f"\n[... truncated {omitted} bytes ...]\n"


def split_budget(budget: int) -> tuple[int, int]:
    """(head bytes, tail bytes) of a budget: 80 % and 20 %."""
    head = int(budget * HEAD_FRACTION)
    return head, budget - head


def decode_cut(data: bytes, *, cut_start: bool, cut_end: bool) -> str:
    """Decode UTF-8 that may have been cut mid-character at either edge.

    A character split by the cut is dropped whole rather than shown as a replacement character; bytes
    that were never valid UTF-8 (a command's raw output) still decode with replacement.
    """
    start, end = 0, len(data)
    if cut_start:
        # Skip continuation bytes (10xxxxxx) of a character whose first byte was cut away.
        while start < min(end, 3) and data[start] & 0xC0 == 0x80:
            start += 1
    if cut_end:
        end = _complete_end(data, start, end)
    return data[start:end].decode("utf-8", errors="replace")


def _complete_end(data: bytes, start: int, end: int) -> int:
    # Walk back over at most three continuation bytes to the lead byte of the last character and
    # keep that character only if all of its bytes are present.
    back = end - 1
    while back >= start and end - back <= 4 and data[back] & 0xC0 == 0x80:
        back -= 1
    if back < start:
        return end
    lead = data[back]
    needed = 1 if lead < 0x80 else 2 if lead >> 5 == 0b110 else 3 if lead >> 4 == 0b1110 else 4
    if lead >> 3 == 0b11111 or (lead & 0xC0 == 0x80):
        return end  # not a valid lead byte: leave it to the replacing decoder
    return end if end - back >= needed else back


def truncate_text(text: str, max_bytes: int) -> str:
    """``text`` as is when its UTF-8 form fits ``max_bytes``; otherwise head + marker + tail."""
    data = text.encode("utf-8", errors="surrogatepass")
    if len(data) <= max_bytes:
        return text
    head_bytes, tail_bytes = split_budget(max_bytes)
    omitted = len(data) - head_bytes - tail_bytes
    head = decode_cut(data[:head_bytes], cut_start=False, cut_end=True)
    tail = decode_cut(data[len(data) - tail_bytes :], cut_start=True, cut_end=False) if tail_bytes else ""
    return head + marker(omitted) + tail


class HeadTail:
    """The parts of an unbounded byte stream that §7.1 truncation can ever need, in bounded memory.

    Bytes fill the head (80 % of ``max_bytes``) first; everything after goes through a tail window of
    at least 20 % of ``max_bytes`` (trimmed in batches, so it never holds more than twice that plus one
    chunk). ``total`` counts every byte fed. ``render(budget)`` gives the stream itself when it fits
    the budget, otherwise its head and tail around the marker, for any budget up to ``max_bytes``.
    """

    def __init__(self, max_bytes: int) -> None:
        if max_bytes < 1:
            raise ValueError("max_bytes must be at least 1")
        self.max_bytes = max_bytes
        self._head_limit, self._tail_limit = split_budget(max_bytes)
        self._head = bytearray()
        self._tail = bytearray()
        self._dropped = 0
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self._head_limit - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if not data:
            return
        self._tail += data
        excess = len(self._tail) - self._tail_limit
        if excess > self._tail_limit:
            del self._tail[:excess]
            self._dropped += excess

    @property
    def head(self) -> bytes:
        return bytes(self._head)

    @property
    def retained(self) -> int:
        """Bytes held in memory right now."""
        return len(self._head) + len(self._tail)

    def render(self, budget: int | None = None) -> str:
        budget = self.max_bytes if budget is None else min(budget, self.max_bytes)
        if self.total <= budget:
            # Everything fed fits: with a budget of at most max_bytes nothing was dropped.
            return decode_cut(bytes(self._head + self._tail), cut_start=False, cut_end=False)
        head_bytes, tail_bytes = split_budget(budget)
        head = bytes(self._head[:head_bytes])
        tail = self._last(tail_bytes)
        omitted = self.total - len(head) - len(tail)
        text = decode_cut(head, cut_start=False, cut_end=True) + marker(omitted)
        return text + (decode_cut(tail, cut_start=True, cut_end=False) if tail else "")

    def _last(self, count: int) -> bytes:
        if count <= 0:
            return b""
        if count <= len(self._tail):
            return bytes(self._tail[len(self._tail) - count :])
        # The stream's end reaches back into the head: possible only when nothing was dropped.
        joined = self._head + self._tail
        return bytes(joined[len(joined) - count :])
