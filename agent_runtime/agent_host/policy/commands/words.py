"""What the shell parsers hand the program resolver: words, simple commands, and the reason a command
line cannot be analysed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

__all__ = ["MAX_DEPTH", "SimpleCommand", "Unparseable", "Word"]

MAX_DEPTH = 16
"""Nesting (substitutions, subshells, ``sh -c`` strings) beyond which a command line is refused."""


class Unparseable(Exception):
    """Raised inside the parsers when a command line cannot be analysed with confidence."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Word(NamedTuple):
    """One shell word after quote removal.

    ``literal`` is true when ``text`` is exactly what the program would receive: no parameter or
    command substitution, no unquoted glob or brace characters. ``assignment`` is the variable name
    when the word has the form ``NAME=value`` (unquoted ``NAME=``); ``subscript`` marks ``NAME[…]=``.
    ``raw`` is the source text, for dialects that hand the rest of a line to another interpreter.
    A named tuple rather than a dataclass: the parser makes one per word, and this is the cheapest.
    """

    text: str
    literal: bool
    raw: str = ""
    assignment: str | None = None
    subscript: bool = False


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """The words of one simple command, assignments first, as the shell would run it."""

    words: tuple[Word, ...]
