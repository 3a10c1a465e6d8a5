"""A parser for ``cmd.exe /c`` command lines: the Windows shell the tool runtime runs commands with.

cmd's own grammar has no specification and many quirks, so this reads a conservative subset and
refuses the rest: ``&``, ``&&``, ``||``, ``|``, ``( … )`` groups, redirections, ``^`` escapes and double
quotes. It refuses ``%VAR%`` and ``!VAR!`` anywhere (cmd substitutes them before it parses, so their
values could add commands), and lines that span several lines (cmd /c reads only the first).
"""

from __future__ import annotations

import re

from agent_runtime.agent_host.policy.commands.words import MAX_DEPTH, SimpleCommand, Unparseable, Word

__all__ = ["parse_cmd"]

_PERCENT_VARIABLE = re.compile(r"%[^%\s]+%|%[~*0-9]")
_DELAYED_VARIABLE = re.compile(r"![^!\s]+!")
_OPERATOR = re.compile(r"&&|\|\||>>|>&|<&|[&|<>()]")

_Token = tuple[str, object]  # ("word", Word) | ("op", str) | ("io", str)


def parse_cmd(source: str, depth: int, sink: list[SimpleCommand]) -> None:
    """Append every simple command of ``source`` to ``sink``, or raise :class:`Unparseable`."""
    if depth > MAX_DEPTH:
        raise Unparseable("is nested too deeply")
    if "\x00" in source:
        raise Unparseable("contains a NUL character")
    line = source.strip(" \t\r\n")
    if "\n" in line or "\r" in line:
        raise Unparseable("spans several lines, and cmd /c runs only the first")
    if _PERCENT_VARIABLE.search(line):
        raise Unparseable("uses %VARIABLE% expansion, which cmd applies before it parses the line")
    if _DELAYED_VARIABLE.search(line):
        raise Unparseable("uses !VARIABLE! expansion, which can add commands when delayed expansion is on")
    tokens = _tokens(line)
    position = _Grammar(tokens, sink).line(0, depth)
    if position != len(tokens):
        raise Unparseable(f"has an unexpected {tokens[position][1]!r}")


def _tokens(line: str) -> list[_Token]:
    tokens: list[_Token] = []
    text: list[str] = []
    raw_start: int | None = None
    quoted = False
    i = 0

    def finish(end: int) -> None:
        nonlocal raw_start
        if raw_start is not None:
            tokens.append(("word", Word("".join(text), literal=True, raw=line[raw_start:end])))
            text.clear()
            raw_start = None

    while i < len(line):
        c = line[i]
        if quoted:
            if c == '"':
                quoted = False
            else:
                text.append(c)
            i += 1
            continue
        if c == '"':
            quoted = True
            raw_start = i if raw_start is None else raw_start
            i += 1
            continue
        if c == "^":
            raw_start = i if raw_start is None else raw_start
            if i + 1 < len(line):
                text.append(line[i + 1])
            i += 2
            continue
        if c in " \t":
            finish(i)
            i += 1
            continue
        operator = _OPERATOR.match(line, i)
        if operator:
            if raw_start is not None and c in "<>" and line[raw_start:i].isdigit():
                tokens.append(("io", line[raw_start:i]))
                text.clear()
                raw_start = None
            finish(i)
            tokens.append(("op", operator.group()))
            i = operator.end()
            continue
        raw_start = i if raw_start is None else raw_start
        text.append(c)
        i += 1
    if quoted:
        raise Unparseable("has an unbalanced double quote")
    finish(len(line))
    return tokens


class _Grammar:
    def __init__(self, tokens: list[_Token], sink: list[SimpleCommand]) -> None:
        self.tokens = tokens
        self.sink = sink

    def at(self, i: int) -> _Token:
        return self.tokens[i] if i < len(self.tokens) else ("eof", None)

    def line(self, i: int, depth: int) -> int:
        i = self.pipeline(i, depth)
        while self.at(i) in (("op", "&"), ("op", "&&"), ("op", "||")):
            if self.at(i + 1)[0] == "eof" and self.at(i)[1] == "&":
                return i + 1
            i = self.pipeline(i + 1, depth)
        return i

    def pipeline(self, i: int, depth: int) -> int:
        i = self.command(i, depth)
        while self.at(i) == ("op", "|"):
            i = self.command(i + 1, depth)
        return i

    def command(self, i: int, depth: int) -> int:
        if self.at(i) == ("op", "("):
            if depth + 1 > MAX_DEPTH:
                raise Unparseable("is nested too deeply")
            i = self.line(i + 1, depth + 1)
            if self.at(i) != ("op", ")"):
                raise Unparseable("has an unbalanced parenthesis")
            return self.redirects(i + 1)
        words: list[Word] = []
        while True:
            kind, value = self.at(i)
            if kind == "io" or (kind == "op" and value in ("<", ">", ">>", ">&", "<&")):
                i = self.redirect(i)
                continue
            if kind != "word":
                break
            assert isinstance(value, Word)
            if not words and value.raw.startswith("@"):
                # "@" only turns off echoing of the command; "@@rm" runs rm.
                stripped = value.text.lstrip("@")
                if not stripped:
                    i += 1
                    continue
                value = Word(stripped, literal=True, raw=value.raw.lstrip("@"))
            words.append(value)
            i += 1
        if not words:
            kind, value = self.at(i)
            if kind == "eof":
                raise Unparseable("has an unexpected end where a command should be")
            raise Unparseable(f"has {value!r} where a command should be")
        self.sink.append(SimpleCommand(tuple(words)))
        return i

    def redirects(self, i: int) -> int:
        while self.at(i)[0] == "io" or self.at(i) in (("op", "<"), ("op", ">"), ("op", ">>"), ("op", ">&")):
            i = self.redirect(i)
        return i

    def redirect(self, i: int) -> int:
        if self.at(i)[0] == "io":
            i += 1
        if self.at(i)[0] != "op" or self.at(i + 1)[0] != "word":
            raise Unparseable("has a redirection without a target")
        return i + 2
