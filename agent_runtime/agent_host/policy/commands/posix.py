"""A parser for POSIX ``sh`` command lines (with the bash and zsh forms an agent meets) that finds every
simple command the line would run.

Written by hand: the one maintained Python parser of shell syntax, bashlex, is GPL-3.0 and so cannot
ship inside Cowork, and ``shlex`` only splits words — it knows nothing of ``$(…)``, backticks, here-
documents or compound commands. The parser is deliberately conservative: where sh, bash and zsh could
read a construct differently, or where a construct can run code the parser cannot see (arithmetic
on variables, indirect expansion, function definitions, ``[[ … ]]``), it raises :class:`Unparseable`
rather than guess.

It recurses into command substitutions (``$(…)``, backticks, ``<(…)``/``>(…)``, including those in
double quotes, ``${…}`` words and unquoted here-documents), subshells, brace groups and every compound
command (``if``, ``while``, ``until``, ``for``, ``case``), and records each simple command's words with
their quotes removed, so ``r''m``, ``\\rm`` and ``$'\\x72m'`` are all ``rm``.
"""

from __future__ import annotations

import re

from agent_runtime.agent_host.policy.commands.words import MAX_DEPTH, SimpleCommand, Unparseable, Word

__all__ = ["parse_posix"]

_PLAIN = re.compile(r"[^\s'\"\\$`;&|<>()*?\[{}]+")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\+?=")
_SUBSCRIPT_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\[")
_SPECIAL_PARAMETER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-]")
_PARAMETER_OPERATOR = re.compile(r":[-=+?]|[-=+?]|%%|%|##|#|//|/|\^\^|\^|,,|,")
_NUMERIC_ARITHMETIC = re.compile(r"[0-9\s+\-*/%<>=!&|^~?:,()]*")
_BRACE_EXPANSION = re.compile(r"\{[^{}]*(?:,|\.\.)")
_SIMPLE_LINE = re.compile(r"[ \t]*[A-Za-z0-9_./:=@%+,^-][A-Za-z0-9_./:=@%+,^~ \t-]*")
_FD_NAME = re.compile(r"[0-9]+|\{[A-Za-z_][A-Za-z0-9_]*\}")

# Longest first, so that "<<-" is not read as "<<" and "-".
_OPERATORS = (
    ";;&", "&>>", "<<<", "<<-",
    ";;", ";&", "&&", "||", "|&", "&>", "<<", "<>", "<&", ">>", ">&", ">|",
    ";", "&", "|", "<", ">", "(", ")",
)  # fmt: skip
_REDIRECTS = frozenset({"<", ">", ">>", "<>", ">|", "<&", ">&", "&>", "&>>", "<<", "<<-", "<<<"})
_CASE_ENDS = frozenset({";;", ";&", ";;&"})
_RESERVED = frozenset(
    {"if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while", "until", "for", "in"}
    | {"{", "}", "!", "select", "function", "coproc", "[[", "]]", "foreach", "end", "always"}
)
_CANNOT_START = {
    "function": "defines a shell function",
    "coproc": "starts a coprocess",
    "[[": "uses [[ … ]], whose arithmetic operators evaluate variables as code",
    "]]": "has a stray ]]",
    "foreach": "uses zsh's foreach loop",
}

_ANSI_ESCAPES = {
    "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
    "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?",
}  # fmt: skip

_Token = tuple[str, object]  # ("word", Word) | ("op", str) | ("io", str) | ("nl", None) | ("eof", None)


def parse_posix(source: str, depth: int, sink: list[SimpleCommand]) -> None:
    """Append every simple command of ``source`` to ``sink``; raise :class:`Unparseable` at the first
    construct that cannot be analysed (the commands found before it stay in ``sink``)."""
    if depth > MAX_DEPTH:
        raise Unparseable("is nested too deeply")
    if "\x00" in source:
        raise Unparseable("contains a NUL character")
    if _SIMPLE_LINE.fullmatch(source):
        # Most agent commands are one plain simple command ("pytest tests/ -x"): words split on
        # blanks are exactly what the full parser would produce, at a fraction of the cost.
        words = source.split()
        if words and words[0] not in _RESERVED:
            sink.append(SimpleCommand(tuple(_plain_word(word) for word in words)))
            return
    _Parser(source, 0, depth, sink).program(close=False)


def _plain_word(raw: str) -> Word:
    assignment = _ASSIGNMENT.match(raw) if "=" in raw else None
    return Word(raw, True, raw, assignment.group(1) if assignment else None)


def _decode_ansi_c(body: str) -> str:
    """The value of a ``$'…'`` string."""
    out: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\" or i + 1 >= len(body):
            out.append(c)
            i += 1
            continue
        e = body[i + 1]
        i += 2
        if e in _ANSI_ESCAPES:
            out.append(_ANSI_ESCAPES[e])
        elif e in "01234567":
            digits = re.match(r"[0-7]{0,2}", body[i:])
            assert digits is not None
            out.append(chr(int(e + digits.group(), 8) & 0xFF))
            i += digits.end()
        elif e in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[e]
            digits = re.match(rf"[0-9A-Fa-f]{{1,{width}}}", body[i:])
            if digits is None:
                out.append("\\" + e)
                continue
            value = int(digits.group(), 16)
            if value > 0x10FFFF or 0xD800 <= value <= 0xDFFF:
                raise Unparseable("has an invalid \\u escape in a $'…' string")
            out.append(chr(value))
            i += digits.end()
        elif e == "c" and i < len(body):
            out.append(chr(ord(body[i]) & 0x1F))
            i += 1
        else:
            out.append("\\" + e)
    text = "".join(out)
    if "\x00" in text:
        raise Unparseable("has a NUL character in a $'…' string")
    return text


class _Parser:
    def __init__(self, source: str, position: int, depth: int, sink: list[SimpleCommand]) -> None:
        self.s = source
        self.n = len(source)
        self.i = position
        self.depth = depth
        self.nesting = 0
        self.sink = sink
        self.token: _Token | None = None
        self.heredocs: list[tuple[str, bool, bool]] = []  # delimiter, strip tabs, body is expanded

    # ------------------------------------------------------------------ grammar

    def program(self, *, close: bool) -> int:
        """Parse a whole program; with ``close``, one that ends at an unmatched ``)``."""
        self.command_list(frozenset())
        kind, value = self.peek()
        if close and (kind, value) == ("op", ")"):
            if self.heredocs:
                raise Unparseable("has a here-document that is never terminated")
            self.token = None
            return self.i
        if not close and kind == "eof":
            if self.heredocs:
                raise Unparseable("has a here-document that is never terminated")
            return self.i
        if kind == "eof":  # only inside $( … ) or <( … ): the line ends before the ")"
            raise Unparseable("expects ')' but has an unexpected end")
        raise Unparseable(f"has unexpected {self.describe((kind, value))}")

    def command_list(self, stop: frozenset[str]) -> None:
        while True:
            self.skip_newlines()
            token = self.peek()
            kind, value = token
            if kind == "eof" or (kind == "op" and value in {")", *_CASE_ENDS}):
                return
            if self.reserved(token) in stop:
                return
            self.and_or()
            kind, value = self.peek()
            if kind == "op" and value in (";", "&"):
                self.token = None
                continue
            if kind == "nl":
                continue
            return

    def and_or(self) -> None:
        self.pipeline()
        while self.peek() in (("op", "&&"), ("op", "||")):
            self.token = None
            self.skip_newlines()
            self.pipeline()

    def pipeline(self) -> None:
        if self.reserved(self.peek()) == "!":
            self.token = None
        self.command()
        while self.peek() in (("op", "|"), ("op", "|&")):
            self.token = None
            self.skip_newlines()
            self.command()

    def command(self) -> None:
        token = self.peek()
        word = self.reserved(token)
        self.nesting += 1
        if self.depth + self.nesting > MAX_DEPTH * 4:
            raise Unparseable("is nested too deeply")
        try:
            if token == ("op", "("):
                self.token = None
                if self.i < self.n and self.s[self.i] == "(":
                    raise Unparseable("uses an arithmetic command (( … )), which evaluates variables as code")
                self.command_list(frozenset())
                self.expect_op(")")
                self.redirects()
            elif word is None:
                self.simple_command()
            elif word == "{":
                self.token = None
                self.command_list(frozenset({"}"}))
                self.expect_word("}")
                self.redirects()
            elif word == "if":
                self.token = None
                self.command_list(frozenset({"then"}))
                self.expect_word("then")
                self.command_list(frozenset({"elif", "else", "fi"}))
                while self.reserved(self.peek()) == "elif":
                    self.token = None
                    self.command_list(frozenset({"then"}))
                    self.expect_word("then")
                    self.command_list(frozenset({"elif", "else", "fi"}))
                if self.reserved(self.peek()) == "else":
                    self.token = None
                    self.command_list(frozenset({"fi"}))
                self.expect_word("fi")
                self.redirects()
            elif word in ("while", "until"):
                self.token = None
                self.command_list(frozenset({"do"}))
                self.do_group()
            elif word in ("for", "select"):
                self.for_loop()
            elif word == "case":
                self.case()
            elif word in _CANNOT_START:
                raise Unparseable(_CANNOT_START[word])
            else:
                raise Unparseable(f"has {word!r} where a command should be")
        finally:
            self.nesting -= 1

    def do_group(self) -> None:
        self.expect_word("do")
        self.command_list(frozenset({"done"}))
        self.expect_word("done")
        self.redirects()

    def for_loop(self) -> None:
        self.token = None
        if self.peek() == ("op", "("):
            raise Unparseable("uses an arithmetic for loop, which evaluates variables as code")
        kind, value = self.peek()
        if kind != "word" or not isinstance(value, Word) or not _NAME.fullmatch(value.raw):
            raise Unparseable("has a for loop without a plain variable name")
        self.token = None
        self.skip_newlines()
        if self.reserved(self.peek()) == "in":
            self.token = None
            while self.peek()[0] == "word":
                self.token = None  # the loop's values: their substitutions were parsed while lexing
            if self.peek() in (("op", ";"), ("nl", None)):
                self.token = None
        elif self.peek() == ("op", ";"):
            self.token = None
        self.skip_newlines()
        self.do_group()

    def case(self) -> None:
        self.token = None
        if self.peek()[0] != "word":
            raise Unparseable("has a case statement without a word")
        self.token = None
        self.skip_newlines()
        self.expect_word("in")
        self.skip_newlines()
        while self.reserved(self.peek()) != "esac":
            if self.peek() == ("op", "("):
                self.token = None
            while True:
                if self.peek()[0] != "word":
                    raise Unparseable("has a case pattern that is not a word")
                self.token = None
                if self.peek() != ("op", "|"):
                    break
                self.token = None
            self.expect_op(")")
            self.command_list(frozenset({"esac"}))
            kind, value = self.peek()
            if kind == "op" and value in _CASE_ENDS:
                self.token = None
                self.skip_newlines()
            elif self.reserved((kind, value)) != "esac":
                raise Unparseable(f"has unexpected {self.describe((kind, value))} in a case statement")
        self.token = None
        self.redirects()

    def simple_command(self) -> None:
        words: list[Word] = []
        redirected = False
        while True:
            kind, value = self.peek()
            if kind == "io":
                self.token = None
                kind, value = self.peek()
                if kind != "op" or value not in _REDIRECTS:
                    raise Unparseable("has a file descriptor number without a redirection")
            if kind == "op" and value in _REDIRECTS:
                self.redirect(str(value))
                redirected = True
                continue
            if kind == "word":
                assert isinstance(value, Word)
                self.token = None
                words.append(value)
                if len(words) == 1 and self.peek() == ("op", "("):
                    raise Unparseable("defines a shell function")
                continue
            break
        if not words and not redirected:
            raise Unparseable(f"has {self.describe(self.peek())} where a command should be")
        if words:
            self.sink.append(SimpleCommand(tuple(words)))

    def redirects(self) -> None:
        while True:
            kind, value = self.peek()
            if kind == "io":
                self.token = None
                continue
            if kind == "op" and value in _REDIRECTS:
                self.redirect(str(value))
                continue
            return

    def redirect(self, operator: str) -> None:
        self.token = None
        kind, target = self.peek()
        if kind != "word" or not isinstance(target, Word):
            raise Unparseable(f"has a redirection {operator} without a target")
        self.token = None
        if operator in ("<<", "<<-"):
            expand = not any(q in target.raw for q in "'\"\\")
            self.heredocs.append((target.text, operator == "<<-", expand))

    # ------------------------------------------------------------------ tokens

    def peek(self) -> _Token:
        if self.token is None:
            self.token = self.lex()
        return self.token

    def skip_newlines(self) -> None:
        while self.peek()[0] == "nl":
            self.token = None

    def reserved(self, token: _Token) -> str | None:
        kind, value = token
        if kind == "word" and isinstance(value, Word) and value.raw in _RESERVED:
            return value.raw
        return None

    def expect_word(self, word: str) -> None:
        if self.reserved(self.peek()) != word:
            raise Unparseable(f"expects {word!r} but has {self.describe(self.peek())}")
        self.token = None

    def expect_op(self, operator: str) -> None:
        if self.peek() != ("op", operator):
            raise Unparseable(f"expects {operator!r} but has {self.describe(self.peek())}")
        self.token = None

    @staticmethod
    def describe(token: _Token) -> str:
        kind, value = token
        if kind == "eof":
            return "an unexpected end"
        if kind == "nl":
            return "a line break"
        if isinstance(value, Word):
            return f"{value.raw!r}"
        return f"{value!r}"

    def lex(self) -> _Token:
        s, n = self.s, self.n
        while self.i < n:
            c = s[self.i]
            if c in " \t":
                self.i += 1
            elif c == "\\" and s.startswith("\\\n", self.i):
                self.i += 2
            elif c == "#":
                end = s.find("\n", self.i)
                self.i = n if end < 0 else end
            else:
                break
        if self.i >= n:
            return ("eof", None)
        c = s[self.i]
        if c == "\n":
            self.i += 1
            self.read_heredocs()
            return ("nl", None)
        if c in "<>" and s.startswith("(", self.i + 1):
            start = self.i
            self.i = self.substitution(self.i + 2)
            return ("word", Word("", literal=False, raw=s[start : self.i]))
        if c in ";&|<>()":
            for operator in _OPERATORS:
                if s.startswith(operator, self.i):
                    self.i += len(operator)
                    return ("op", operator)
        return self.word()

    def word(self) -> _Token:
        s, n = self.s, self.n
        start = self.i
        parts: list[str] = []
        literal = True
        braces = False
        while self.i < n:
            c = s[self.i]
            plain = _PLAIN.match(s, self.i)
            if plain:
                parts.append(plain.group())
                self.i = plain.end()
                continue
            if c in " \t\n;&|<>()":
                break
            if c == "\\":
                if s.startswith("\n", self.i + 1):
                    self.i += 2
                elif self.i + 1 < n:
                    parts.append(s[self.i + 1])
                    self.i += 2
                else:
                    raise Unparseable("ends with a lone backslash")
            elif c == "'":
                end = s.find("'", self.i + 1)
                if end < 0:
                    raise Unparseable("has an unbalanced single quote")
                parts.append(s[self.i + 1 : end])
                self.i = end + 1
            elif c == '"':
                literal &= self.double_quoted(parts)
            elif c == "$":
                literal &= self.dollar(parts, quoted=False)
            elif c == "`":
                self.backtick(quoted=False)
                literal = False
            elif c in "{}":
                parts.append(c)
                self.i += 1
                braces = True
            elif c in "*?[":
                parts.append(c)
                self.i += 1
                literal = False
            else:
                # Other whitespace (vertical tab, form feed, no-break space…) does not split words.
                parts.append(c)
                self.i += 1
        raw = s[start : self.i]
        if raw == "[":
            literal = True  # a lone "[" is the test command, not a glob
        if braces and _BRACE_EXPANSION.search(raw):
            literal = False  # {a,b} and {1..9} expand to several words; a lone {} does not
        if self.i < n and s[self.i] in "<>" and _FD_NAME.fullmatch(raw):
            return ("io", raw)
        assignment = _ASSIGNMENT.match(raw)
        subscript = bool(_SUBSCRIPT_ASSIGNMENT.match(raw)) and "=" in raw
        return (
            "word",
            Word(
                "".join(parts),
                literal=literal,
                raw=raw,
                assignment=assignment.group(1) if assignment else None,
                subscript=subscript,
            ),
        )

    def double_quoted(self, parts: list[str]) -> bool:
        """Read ``"…"`` starting at the opening quote; True if its value is literal."""
        s, n = self.s, self.n
        self.i += 1
        literal = True
        while self.i < n:
            c = s[self.i]
            if c == '"':
                self.i += 1
                return literal
            if c == "\\" and self.i + 1 < n:
                following = s[self.i + 1]
                if following == "\n":
                    pass
                elif following in '$`"\\':
                    parts.append(following)
                else:
                    parts.append("\\" + following)
                self.i += 2
            elif c == "$":
                literal &= self.dollar(parts, quoted=True)
            elif c == "`":
                self.backtick(quoted=True)
                literal = False
            else:
                parts.append(c)
                self.i += 1
        raise Unparseable("has an unbalanced double quote")

    def dollar(self, parts: list[str], *, quoted: bool) -> bool:
        """Read an expansion starting at ``$``; True if it stands for a literal value."""
        s, n = self.s, self.n
        following = s[self.i + 1] if self.i + 1 < n else ""
        if following == "'" and not quoted:
            end = self.i + 2
            while end < n and s[end] != "'":
                end += 2 if s[end] == "\\" else 1
            if end >= n:
                raise Unparseable("has an unbalanced $'…' string")
            parts.append(_decode_ansi_c(s[self.i + 2 : end]))
            self.i = end + 1
            return True
        if following == '"' and not quoted:
            self.i += 1
            return self.double_quoted(parts)
        if following == "(":
            if s.startswith("((", self.i + 1):
                self.arithmetic(self.i + 3)
            else:
                self.i = self.substitution(self.i + 2)
            return False
        if following == "{":
            self.parameter(self.i + 2, quoted=quoted)
            return False
        if following == "[":
            raise Unparseable("uses $[ … ] arithmetic, which evaluates variables as code")
        special = _SPECIAL_PARAMETER.match(s, self.i + 1)
        if special:
            self.i = special.end() if following.isalpha() or following == "_" else self.i + 2
            return False
        if (
            following in ("=", "~", "^", "+")
            and self.i + 2 < n
            and (s[self.i + 2].isalnum() or s[self.i + 2] in "_{")
        ):
            raise Unparseable(f"uses the zsh expansion ${following}…")
        parts.append("$")
        self.i += 1
        return True

    def arithmetic(self, start: int) -> None:
        """``$(( … ))``: only numbers and operators; a name in it would be evaluated as code."""
        depth = 0
        j = start
        while j < self.n:
            c = self.s[j]
            if c == "(":
                depth += 1
            elif c == ")":
                if depth == 0:
                    if self.s.startswith("))", j) and _NUMERIC_ARITHMETIC.fullmatch(self.s[start:j]):
                        self.i = j + 2
                        return
                    break
                depth -= 1
            j += 1
        raise Unparseable("uses $(( … )) arithmetic on something other than plain numbers")

    def parameter(self, start: int, *, quoted: bool) -> None:
        """``${…}``: plain forms only (``${x}``, ``${#x}``, ``${x:-word}``, ``${x%pat}``…)."""
        s = self.s
        length = re.match(r"#([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])\}", s[start : start + 256])
        if length:
            self.i = start + length.end()
            return
        if s.startswith("!", start):
            raise Unparseable("uses indirect expansion ${!…}, which can evaluate code")
        name = _SPECIAL_PARAMETER.match(s, start)
        if not name:
            raise Unparseable("uses a ${…} form that is not supported")
        j = name.end()
        if s.startswith("}", j):
            self.i = j + 1
            return
        operator = _PARAMETER_OPERATOR.match(s, j)
        if not operator:
            raise Unparseable("uses a ${…} form (substring, subscript or flags) that can evaluate code")
        self.i = operator.end()
        ignored: list[str] = []
        while self.i < self.n:
            c = s[self.i]
            if c == "}":
                self.i += 1
                return
            if c == "\\":
                self.i += 2
            elif c == "'":
                if quoted:
                    raise Unparseable(
                        "has a single quote inside a double-quoted ${…}, which shells read differently"
                    )
                end = s.find("'", self.i + 1)
                if end < 0:
                    raise Unparseable("has an unbalanced single quote")
                self.i = end + 1
            elif c == '"':
                self.double_quoted(ignored)
            elif c == "$":
                self.dollar(ignored, quoted=True)
            elif c == "`":
                self.backtick(quoted=True)
            else:
                self.i += 1
        raise Unparseable("has an unterminated ${…}")

    def substitution(self, start: int) -> int:
        """``$(…)``, ``<(…)``, ``>(…)``: parse the inner program; return the index after ``)``."""
        if self.depth + 1 > MAX_DEPTH:
            raise Unparseable("is nested too deeply")
        inner = _Parser(self.s, start, self.depth + 1, self.sink)
        return inner.program(close=True)

    def backtick(self, *, quoted: bool) -> None:
        s, n = self.s, self.n
        j = self.i + 1
        body: list[str] = []
        escapable = '$`\\"' if quoted else "$`\\"
        while j < n:
            c = s[j]
            if c == "\\" and j + 1 < n:
                body.append(s[j + 1] if s[j + 1] in escapable else "\\" + s[j + 1])
                j += 2
                continue
            if c == "`":
                self.i = j + 1
                parse_posix("".join(body), self.depth + 1, self.sink)
                return
            body.append(c)
            j += 1
        raise Unparseable("has an unbalanced backtick")

    def read_heredocs(self) -> None:
        s = self.s
        for delimiter, strip_tabs, expand in self.heredocs:
            body_start = self.i
            while True:
                if self.i >= self.n:
                    raise Unparseable(f"has a here-document that never reaches {delimiter!r}")
                end = s.find("\n", self.i)
                line_end = self.n if end < 0 else end
                line = s[self.i : line_end]
                self.i = line_end + 1 if end >= 0 else self.n
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    body = s[body_start : line_end - len(line)]
                    break
            if expand:
                _HeredocBody(body, 0, self.depth, self.sink).scan()
        self.heredocs = []


class _HeredocBody(_Parser):
    """An unquoted here-document body: text as in double quotes, without the quotes."""

    def scan(self) -> None:
        parts: list[str] = []
        while self.i < self.n:
            c = self.s[self.i]
            if c == "\\":
                self.i += 2
            elif c == "$":
                self.dollar(parts, quoted=True)
            elif c == "`":
                self.backtick(quoted=True)
            else:
                self.i += 1
