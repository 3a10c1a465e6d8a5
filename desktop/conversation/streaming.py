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

:class:`AnswerSplitter` cuts an answer into prose and fenced code blocks, the same way while it
streams (reading only what was added) and once it is whole (:func:`split_answer`): the view draws a
code block in a frame of its own, highlighted once when its closing fence arrives.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["AnswerSplitter", "Code", "Part", "Prose", "SettledScanner", "split_answer"]


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


@dataclass(frozen=True, slots=True)
class Prose:
    """Markdown between code blocks."""

    text: str


@dataclass(frozen=True, slots=True)
class Code:
    """A fenced code block: its text (without the fences), the fence's language, and whether its
    closing fence has arrived."""

    code: str
    language: str
    closed: bool


Part = Prose | Code


class AnswerSplitter:
    """Splits a growing answer into :class:`Prose` and :class:`Code` parts, reading each line once.

    :attr:`done` holds the parts that can no longer change (a prose run ended by a fence, a closed
    code block); :meth:`feed` returns them followed by the part still growing.
    """

    __slots__ = ("_fence", "_language", "_position", "_start", "done")

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """The text was replaced: start over."""
        self.done: list[Part] = []
        self._position = 0  # the start of the first line not read yet
        self._start = 0  # where the growing part's text starts
        self._fence: str | None = None
        self._language = ""

    def feed(self, text: str) -> list[Part]:
        """All parts of ``text`` (which only grows between calls)."""
        position, fence, start = self._position, self._fence, self._start
        while True:
            end = text.find("\n", position)
            if end < 0:
                break
            stripped = text[position:end].strip()
            if fence is None:
                opening = _fence_of(stripped)
                if opening is not None:
                    if text[start:position].strip():
                        self.done.append(Prose(text[start:position]))
                    fence, self._language, start = opening, _language_of(stripped, opening), end + 1
            elif _closes(stripped, fence):
                self.done.append(Code(text[start:position].removesuffix("\n"), self._language, True))
                fence, start = None, end + 1
            position = end + 1
        self._position, self._fence, self._start = position, fence, start
        if fence is not None:
            return [*self.done, Code(text[start:], self._language, False)]
        if text[start:].strip():
            return [*self.done, Prose(text[start:])]
        return list(self.done)


def split_answer(text: str) -> list[Part]:
    """The parts of a whole answer: what :class:`AnswerSplitter` ends with once the last line is in."""
    parts = AnswerSplitter().feed(text if text.endswith("\n") else text + "\n")
    last = parts[-1] if parts else None
    if isinstance(last, Code) and not last.closed:
        # The answer ended inside a code block: it is still code, and nothing more will come.
        parts[-1] = Code(last.code.removesuffix("\n"), last.language, True)
    elif isinstance(last, Prose):
        parts[-1] = Prose(last.text.removesuffix("\n") if not text.endswith("\n") else last.text)
    return parts


def _fence_of(stripped: str) -> str | None:
    for char in "`~":
        if stripped.startswith(char * 3):
            fence = char * (len(stripped) - len(stripped.lstrip(char)))
            # A backtick fence's info string has no backticks: ```a``` on one line is inline code.
            if char == "`" and "`" in stripped[len(fence) :]:
                return None
            return fence
    return None


def _language_of(stripped: str, fence: str) -> str:
    info = stripped[len(fence) :].strip()
    return info.split()[0].strip("{}.").lower() if info else ""


def _closes(stripped: str, fence: str) -> bool:
    # A closing fence: the same character, at least as many, and nothing else on the line.
    return stripped.startswith(fence) and not stripped.lstrip(fence[0])
