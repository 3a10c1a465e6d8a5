"""EditFile's replacement rule: ``oldString`` → ``newString`` in a file's bytes.

The tool runtime applies it to write the file; the agent host applies it to show the diff in the
approval request (seed 000 §10.2) before anything is written. Both use this one function so the diff
the user approves is exactly the change made. It lives here because the two never import each other.

The file keeps its encoding and line endings: the bytes are decoded with the first encoding of the
chain that fits (UTF-8 with or without a byte-order mark, then the OS's legacy encoding, then
Latin-1 — ReadFile's chain), and the strings the model wrote are matched in the file's own line
endings (a model writes ``\\n`` even for a CRLF file it read).
"""

from __future__ import annotations

import codecs
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["EditRefused", "EditedText", "apply_edit"]

_BOM = codecs.BOM_UTF8
#: A NUL byte in the first block: binary, as git and grep decide (and ReadFile).
_SNIFF = 8192
#: Match positions named in a refusal; past these, only the count.
_SHOWN_LINES = 20


class EditRefused(ValueError):
    """The edit cannot be made as asked: the message says why (and where ``oldString`` occurs).

    ``bad_arguments`` tells the arguments themselves apart (the same strings, a binary file) from a
    file whose text does not fit them (no match, several matches, a character it cannot hold).
    """

    def __init__(self, message: str, *, bad_arguments: bool = False) -> None:
        super().__init__(message)
        self.bad_arguments = bad_arguments


@dataclass(frozen=True, slots=True)
class EditedText:
    before: str
    after: str
    data: bytes
    """``after`` encoded as the file was (its BOM, encoding and line endings)."""
    encoding: str
    replacements: int


def apply_edit(
    data: bytes,
    old: str,
    new: str,
    *,
    replace_all: bool,
    encodings: Sequence[str],
    name: str = "the file",
) -> EditedText:
    """``data`` with ``old`` replaced by ``new``; raises :class:`EditRefused`.

    ``old`` must occur exactly once unless ``replace_all``; a refusal for zero or several matches
    says how many there are and on which lines. ``encodings`` is the decoding chain after UTF-8.
    """
    if old == new:
        raise EditRefused(
            "oldString and newString are the same; there is nothing to change.", bad_arguments=True
        )
    if b"\x00" in data[:_SNIFF]:
        raise EditRefused(f"{name} is a binary file; EditFile changes text files only.", bad_arguments=True)
    text, encoding, bom = _decode(data, encodings)
    forms = _forms(old, new, _line_ending(text))
    old_form, new_form = next((form for form in forms if form[0] in text), forms[0])
    count = text.count(old_form)
    if count == 0:
        raise EditRefused(
            f"oldString was not found in {name}; read the file again and copy the text exactly,"
            " including its indentation."
        )
    if count > 1 and not replace_all:
        lines = _match_lines(text, old_form)
        shown = ", ".join(map(str, lines[:_SHOWN_LINES])) + (", …" if count > _SHOWN_LINES else "")
        raise EditRefused(
            f"oldString occurs {count} times in {name} (at lines {shown}); include more surrounding"
            " text to make it unique, or set replaceAll to change every occurrence."
        )
    after = text.replace(old_form, new_form)
    try:
        encoded = after.encode(encoding)
    except UnicodeEncodeError as exc:
        bad = exc.object[exc.start : exc.end]
        raise EditRefused(
            f"newString contains {bad!r}, which {name}'s encoding ({encoding}) cannot hold."
        ) from exc
    return EditedText(before=text, after=after, data=bom + encoded, encoding=encoding, replacements=count)


def _decode(data: bytes, encodings: Sequence[str]) -> tuple[str, str, bytes]:
    if data.startswith(_BOM):
        try:
            return data[len(_BOM) :].decode("utf-8"), "utf-8", _BOM
        except UnicodeDecodeError:
            pass
    for encoding in ("utf-8", *encodings):
        try:
            return data.decode(encoding), encoding, b""
        except (UnicodeDecodeError, LookupError):
            continue
    return data.decode("latin-1"), "latin-1", b""


def _line_ending(text: str) -> str:
    crlf = text.count("\r\n") if "\r" in text else 0
    return "\r\n" if crlf and crlf >= text.count("\n") - crlf else "\n"


def _forms(old: str, new: str, ending: str) -> list[tuple[str, str]]:
    """The strings in the file's line endings first, then exactly as written (mixed files)."""
    old_n, new_n = old.replace("\r\n", "\n"), new.replace("\r\n", "\n")
    if ending == "\r\n":
        old_n, new_n = old_n.replace("\n", "\r\n"), new_n.replace("\n", "\r\n")
    forms = [(old_n, new_n)]
    if (old_n, new_n) != (old, new):
        forms.append((old, new))
    return forms


def _match_lines(text: str, old: str) -> list[int]:
    lines: list[int] = []
    line, scanned, start = 1, 0, text.find(old)
    while start >= 0 and len(lines) <= _SHOWN_LINES:
        line += text.count("\n", scanned, start)
        scanned = start
        lines.append(line)
        start = text.find(old, start + len(old))
    return lines
