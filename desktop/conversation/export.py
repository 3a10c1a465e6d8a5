"""A conversation written out for the user to keep or share: Markdown to read, JSON to process.
Qt-free.

Both are made from the conversation's messages as a ``session_history`` holds them (seed 004: user,
assistant, tool and system messages, an assistant message with the tool calls it made, a tool message
with the call it answers). Nothing is shortened: an export is the whole conversation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from desktop.i18n import translate

__all__ = ["EXPORT_FORMAT", "ConversationExport", "ExportError", "to_json", "to_markdown", "write_export"]

EXPORT_FORMAT = "cowork.conversation"
EXPORT_VERSION = 1


class ExportError(Exception):
    """The export could not be written; ``str()`` says why, for the user."""


@dataclass(frozen=True)
class ConversationExport:
    title: str
    folder: str | None
    """The project folder; ``None`` for a general chat."""
    session_ids: Sequence[str]
    """The sessions the conversation ran in, oldest first."""
    messages: Sequence[Mapping[str, Any]]
    """``session_history`` messages, wire dicts."""
    exported_at: datetime


def to_json(conversation: ConversationExport) -> str:
    document = {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "title": conversation.title,
        "folder": conversation.folder,
        "sessionIds": list(conversation.session_ids),
        "exportedAt": _utc(conversation.exported_at).isoformat().replace("+00:00", "Z"),
        "messages": [dict(message) for message in conversation.messages],
    }
    return json.dumps(document, indent=2, ensure_ascii=False, default=str) + "\n"


def to_markdown(conversation: ConversationExport) -> str:
    lines = [f"# {_one_line(conversation.title)}", ""]
    lines.append(
        translate("Export", "- Project folder: {folder}").format(folder=conversation.folder)
        if conversation.folder
        else translate("Export", "- General chat")
    )
    lines.append(translate("Export", "- Exported: {when}").format(when=_iso(conversation.exported_at)))
    lines.append("")
    for message in conversation.messages:
        lines.extend(_message(message))
    return "\n".join(lines).rstrip("\n") + "\n"


def write_export(path: Path, conversation: ConversationExport) -> None:
    """Markdown for a ``.md`` (or ``.markdown``) file, JSON for ``.json``."""
    suffix = path.suffix.lower()
    if suffix in (".md", ".markdown"):
        text = to_markdown(conversation)
    elif suffix == ".json":
        text = to_json(conversation)
    else:
        raise ExportError(
            translate("Export", "Choose a file name ending in .md or .json (not {name}).").format(
                name=repr(path.name)
            )
        )
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ExportError(
            translate("Export", "{path} could not be written: {reason}.").format(
                path=path, reason=exc.strerror or exc
            )
        ) from exc


def _message(message: Mapping[str, Any]) -> list[str]:
    role = message.get("role")
    content = str(message.get("content") or "")
    when = _when(message.get("timestamp"))
    if role == "user":
        return [translate("Export", "## You") + when, "", content, ""]
    if role == "assistant":
        out = [translate("Export", "## Assistant") + when, ""]
        if content.strip():
            out += [content, ""]
        for call in message.get("toolCalls") or ():
            name = str(call.get("toolName") or "tool")
            arguments = json.dumps(call.get("arguments") or {}, indent=2, ensure_ascii=False)
            out += [
                translate("Export", "**Tool call:** `{tool}`").format(tool=name),
                "",
                *_fenced(arguments, "json"),
                "",
            ]
        return out
    if role == "tool":
        name = str(message.get("toolName") or "tool")
        status = message.get("toolStatus")
        heading = translate("Export", "**Result of `{tool}`**").format(tool=name) + (
            f" ({status})" if status else ""
        )
        return [heading, "", *_fenced(content, ""), ""]
    if content.strip():
        return [f"> {line}" if line else ">" for line in content.splitlines()] + [""]
    return []


def _fenced(text: str, language: str) -> list[str]:
    """``text`` in a code fence longer than any run of backticks inside it, so it cannot end early."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{language}", text, fence]


def _one_line(text: str) -> str:
    return " ".join(text.split()) or "Conversation"


def _when(value: object) -> str:
    if not isinstance(value, str) or not value:
        return ""
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return ""
    return f" · {_iso(moment)}"


def _iso(moment: datetime) -> str:
    return _utc(moment).strftime("%Y-%m-%d %H:%M:%S UTC")


def _utc(moment: datetime) -> datetime:
    return (moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)).astimezone(UTC)
