"""Where streamed Markdown can be cut so that what comes before it is drawn once and never again.

While the assistant's answer streams, the view draws the *settled* part — whole blocks that later
text can no longer change — once, appending each newly settled block, and redraws only the
unsettled tail on every frame. A frame then costs the size of the last paragraph, not of the whole
answer (laying out a 200 KB answer from scratch takes tens of milliseconds; its last paragraph well
under one).

A block is settled once a blank line follows it outside a fenced code block: Markdown starts a new
block there whatever comes next. (A list item after the blank line would have continued a loose
list, and an indented code block may span blank lines; drawn apart, both look the same. The view
draws the whole answer once more when the stream ends.)
"""

from __future__ import annotations

__all__ = ["SettledScanner"]


class SettledScanner:
    """Reads a growing text line by line, remembering where it stopped, so each call only reads the
    text added since the last one."""

    __slots__ = ("_fence", "_position", "_settled")

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """The text was replaced (the runtime discarded a partial answer): start over."""
        self._position = 0  # the start of the first line not read yet
        self._fence: str | None = None  # the fence of the code block open at ``_position``
        self._settled = 0

    @property
    def in_code_block(self) -> bool:
        return self._fence is not None

    def feed(self, text: str) -> int:
        """How much of ``text`` (which only grows between calls) is settled."""
        position, fence, settled = self._position, self._fence, self._settled
        while True:
            end = text.find("\n", position)
            if end < 0:
                break  # the last line may still change
            stripped = text[position:end].strip()
            if fence is None:
                opening = _fence_of(stripped)
                if opening is not None:
                    fence = opening
                elif not stripped:
                    settled = end + 1
            elif _closes(stripped, fence):
                fence = None
            position = end + 1
        self._position, self._fence, self._settled = position, fence, settled
        return settled


def _fence_of(stripped: str) -> str | None:
    for char in "`~":
        if stripped.startswith(char * 3):
            return char * (len(stripped) - len(stripped.lstrip(char)))
    return None


def _closes(stripped: str, fence: str) -> bool:
    # A closing fence: the same character, at least as many, and nothing else on the line.
    return stripped.startswith(fence) and not stripped.lstrip(fence[0])
