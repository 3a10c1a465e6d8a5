"""What the approval dialog says about one request, worked out without Qt (seed 000 §10.1).

The same facts ``cowork exec`` prints in a terminal (``desktop.headless.approvals``): title, what would
run, the risk, the rule's description, every detail the request carries, and notes the user should
weigh. Values come off the wire and are shown as text, never interpreted as markup.
"""

from __future__ import annotations

import json
import math
import unicodedata
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from desktop.i18n import QT_TRANSLATE_NOOP, translate

__all__ = [
    "DetailRow",
    "RequestView",
    "countdown_text",
    "describe",
    "reveal_hidden",
    "waiting_text",
]

RISK_LEVELS = ("low", "medium", "high")


def risk_label(risk: str) -> str:
    """A risk level in words, in the language installed."""
    return {
        "low": translate("Approval", "Low risk"),
        "medium": translate("Approval", "Medium risk"),
        "high": translate("Approval", "High risk"),
    }[risk]


HIDDEN_CHARACTERS_NOTE = QT_TRANSLATE_NOOP(
    "Approval",
    "Some text contains invisible or direction-changing characters; they are shown as ⟨U+XXXX⟩ "
    "so that what you read is what would run.",
)


@dataclass(frozen=True)
class DetailRow:
    label: str
    value: str
    kind: Literal["text", "code", "json"] = "text"
    """``code``: shown in a monospace font (commands, paths, URLs); ``json``: the same, taller (an MCP
    tool's arguments, pretty-printed)."""


@dataclass(frozen=True)
class RequestView:
    title: str
    summary: str
    risk: str
    risk_label: str
    description: str
    rows: tuple[DetailRow, ...]
    diff: str
    notes: tuple[str, ...]
    scope_label: str
    """What "approve for the rest of this conversation" covers, in words: the runtime's session grant
    is exact (the same capability on the same command, file or domain), and the user must see that.
    ``""`` when the request names no such target: the runtime would grant it only once anyway."""


def describe(request: dict[str, Any]) -> RequestView:
    """Everything the dialog shows of ``request``, whole: nothing is cut, since the end of a long
    command line is where something unexpected would hide."""
    details = request.get("details")
    details = details if isinstance(details, dict) else {}
    risk = request.get("riskLevel")
    risk = risk if risk in RISK_LEVELS else "high"
    title = _text(request.get("title")) or translate("Approval", "Approval needed")
    rows = tuple(_rows(details))
    summary = _text(request.get("actionSummary")) or title
    notes = [note for note in (_text(n) for n in _list(request.get("notes"))) if note]
    shown = [title, summary, *(row.value for row in rows)]
    if any(_HIDDEN_MARK in text for text in shown):
        notes.insert(0, translate("Approval", HIDDEN_CHARACTERS_NOTE))
    return RequestView(
        title=title,
        summary=summary,
        risk=risk,
        risk_label=risk_label(risk),
        description=_text(request.get("description")),
        rows=rows,
        diff=_text(details.get("diff"), strip=False),
        notes=tuple(notes),
        scope_label=_scope_label(details),
    )


def _rows(details: dict[str, Any]) -> list[DetailRow]:
    rows = []
    server, mcp_tool = _text(details.get("mcpServer")), _text(details.get("mcpTool"))
    if server:
        # Which remote server receives the call, and what it receives: the arguments whole.
        called = translate("Approval", "Server: {server} · Tool: {tool}").format(
            server=server, tool=mcp_tool or _text(details.get("toolName"))
        )
        rows.append(DetailRow(translate("Approval", "MCP tool"), called))
        if "arguments" in details:
            rows.append(
                DetailRow(translate("Approval", "Arguments"), _json(details.get("arguments")), "json")
            )
    elif tool := _text(details.get("toolName")):
        rows.append(DetailRow(translate("Approval", "Tool"), tool))
    if command := _text(details.get("command")):
        rows.append(DetailRow(translate("Approval", "Command"), command, "code"))
    if cwd := _text(details.get("cwd")):
        rows.append(DetailRow(translate("Approval", "In folder"), cwd, "code"))
    if path := _text(details.get("path")):
        rows.append(DetailRow(translate("Approval", "File"), path, "code"))
    if url := _text(details.get("url")):
        method = _text(details.get("method"))
        rows.append(DetailRow(translate("Approval", "Request"), f"{method} {url}" if method else url, "code"))
    # toolCallId only ties the request to its tool row: an identifier, not a fact to decide on.
    known = {
        "toolName",
        "toolCallId",
        "command",
        "cwd",
        "path",
        "url",
        "method",
        "diff",
        "mcpServer",
        "mcpTool",
    }
    if server:
        known.add("arguments")
    # Fields a newer runtime adds are still shown: the user decides on every fact the request carries.
    for key, value in details.items():
        if key not in known and (text := _text(value)):
            rows.append(DetailRow(key, text))
    return rows


def _scope_label(details: dict[str, Any]) -> str:
    if details.get("command"):
        return translate("Approval", "Approve this exact command for the rest of this conversation")
    if details.get("url"):
        host = _host(str(details["url"]))
        if host:
            return translate(
                "Approval", "Approve requests to {host} for the rest of this conversation"
            ).format(host=host)
    if details.get("path"):
        return translate("Approval", "Approve this action on this file for the rest of this conversation")
    return ""


def _host(url: str) -> str:
    try:
        return urlsplit(url).hostname or ""
    except ValueError:
        return ""


def countdown_text(seconds_left: float) -> str:
    """``4:59 left``; ``""`` when the request states no time limit."""
    if math.isinf(seconds_left):
        return ""
    whole = max(0, math.ceil(seconds_left))
    minutes, seconds = divmod(whole, 60)
    return translate("Approval", "{time} left").format(time=f"{minutes}:{seconds:02d}")


def waiting_text(others: int) -> str:
    """``2 more waiting`` for the requests queued behind the one shown; ``""`` when none."""
    return translate("Approval", "{count} more waiting").format(count=others) if others > 0 else ""


_HIDDEN_MARK = "⟨U+"
# Controls, format characters (bidi overrides, zero-width), separators other than the plain space (a
# no-break space looks like one but is not one to a shell), private-use, surrogates and unassigned.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zs", "Zl", "Zp", "Co", "Cs", "Cn"})


def reveal_hidden(text: str) -> str:
    """``text`` with invisible characters (bidi overrides, zero-width and no-break spaces, carriage
    returns…) spelled out as ``⟨U+202E⟩``: they could make a command read differently from what runs.
    Line feeds, tabs and plain spaces stay as they are."""
    if text.isprintable() and _HIDDEN_MARK not in text:
        return text
    out = []
    for char in text:
        if char in "\n\t":
            out.append(char)
        elif char != " " and unicodedata.category(char) in _HIDDEN_CATEGORIES:
            out.append(f"{_HIDDEN_MARK}{ord(char):04X}⟩")
        else:
            out.append(char)
    return "".join(out)


def _text(value: Any, *, strip: bool = True) -> str:
    if value is None or isinstance(value, dict | list):
        return ""
    text = str(value)
    return reveal_hidden(text.strip() if strip else text)


def _json(value: Any) -> str:
    """Arguments as the server would receive them, indented; hidden characters spelled out."""
    try:
        text = json.dumps(value, indent=2, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return reveal_hidden(text)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
