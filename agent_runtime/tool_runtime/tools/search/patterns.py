"""Glob patterns as Glob and Grep's ``glob`` read them, compiled to RE2 (linear time on any name).

``*`` and ``?`` stay within one path component, ``**`` spans any number of them (``src/**/*.py``),
``[abc]``/``[!abc]`` are character classes and ``{ts,tsx}`` alternatives. A pattern without ``/``
matches a file's name at any depth (``*.py`` finds every Python file), as in ``.gitignore`` and
ripgrep's ``--glob``; one with ``/`` matches the path relative to the searched directory.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import re2  # type: ignore[import-untyped]  # google-re2 ships no type information

from agent_runtime.tool_runtime.errors import ToolFailure
from contracts.errors import ErrorCode

__all__ = ["GlobPattern", "compile_glob"]

_MAX_PATTERN_CHARS = 1000
_ANCHOR_BOTH = re2._Anchor.ANCHOR_BOTH


@dataclass(frozen=True, slots=True)
class GlobPattern:
    text: str
    by_name: bool
    regex: Any

    def matches(self, rel: str) -> bool:
        subject = rel[rel.rfind("/") + 1 :] if self.by_name else rel
        data = subject.encode("utf-8", "surrogateescape")
        # RE2's own Match, not the module's fullmatch: that builds a generator and a match object
        # per call, half the time of a Glob over 20,000 files.
        spans: list[tuple[int, int]] = self.regex._regexp.Match(_ANCHOR_BOTH, data, 0, len(data))
        return spans[0][0] >= 0

    def may_match_below(self, rel_dir: str) -> bool:
        """Whether a path below ``rel_dir`` can match: the literal directories a pattern starts with
        (``src/app/**``) spare the walk of every other directory."""
        if self.by_name:
            return True
        literal = _literal_directories(self.text)
        if not literal:
            return True
        depth = rel_dir.count("/") + 1
        wanted = "/".join(literal[:depth])
        return rel_dir == wanted if depth <= len(literal) else rel_dir.startswith("/".join(literal) + "/")


def compile_glob(pattern: str, *, field: str) -> GlobPattern:
    text = pattern.replace("\\", "/") if "\\" in pattern and "/" not in pattern else pattern
    while text.startswith("./"):
        text = text[2:]
    text = text.lstrip("/")
    if not text:
        raise ToolFailure(ErrorCode.INVALID_REQUEST, f"arguments.{field} must name files (got {pattern!r})")
    if len(text) > _MAX_PATTERN_CHARS:
        raise ToolFailure(
            ErrorCode.INVALID_REQUEST, f"arguments.{field} is longer than {_MAX_PATTERN_CHARS} characters"
        )
    by_name = "/" not in text
    try:
        # Names from the disk may carry undecodable bytes (surrogate escapes): matched as bytes.
        regex = re2.compile(_translate(text).encode("utf-8"))
    except re2.error as exc:
        raise ToolFailure(
            ErrorCode.INVALID_REQUEST, f"arguments.{field} is not a valid glob: {pattern!r}"
        ) from exc
    return GlobPattern(text=text, by_name=by_name, regex=regex)


def _literal_directories(text: str) -> list[str]:
    parts = text.split("/")[:-1]
    literal = []
    for part in parts:
        if any(ch in part for ch in "*?[{"):
            break
        literal.append(part)
    return literal


def _translate(text: str) -> str:
    out: list[str] = []
    i, n, braces = 0, len(text), 0
    while i < n:
        ch = text[i]
        if ch == "*":
            if text.startswith("**", i):
                at_start = i == 0 or text[i - 1] == "/"
                i += 2
                if at_start and text.startswith("/", i):
                    out.append("(?:.*/)?")  # "**/": zero or more whole directories
                    i += 1
                else:
                    out.append(".*")
                continue
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            end = text.find("]", i + 2 if text.startswith(("[!", "[^"), i) else i + 1)
            if end < 0:
                out.append(re.escape(ch))
            else:
                body = text[i + 1 : end]
                negate = body.startswith(("!", "^"))
                body = body[1:] if negate else body
                escaped = body.replace("\\", "\\\\").replace("]", "\\]")
                out.append(f"[{'^/' if negate else ''}{escaped}]")
                i = end + 1
                continue
        elif ch == "{":
            braces += 1
            out.append("(?:")
        elif ch == "}" and braces:
            braces -= 1
            out.append(")")
        elif ch == "," and braces:
            out.append("|")
        else:
            out.append(re.escape(ch))
        i += 1
    if braces:
        raise ToolFailure(ErrorCode.INVALID_REQUEST, f"a glob has an unclosed '{{': {text!r}")
    return "".join(out)
