"""When the desktop tells the operating system to notify the user, and what it says (Qt-free; the
window's :mod:`desktop.app.notifications` shows it).

Only while Cowork's window is not the active one — the user looks elsewhere — and only for what
needs them or that they are waiting for: a task finished (or failed), an approval is waiting, an MCP
server asks for input. A task the user cancelled is not news to them. Notifications can be turned
off (``ui.notifications`` in the settings file).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from desktop.i18n import translate

__all__ = ["MAX_BODY_CHARS", "Notification", "NotificationKind", "notification_for"]

#: Notification servers cut long bodies themselves, badly; a sentence or two is what fits.
MAX_BODY_CHARS = 200


class NotificationKind(StrEnum):
    TASK_COMPLETED = "task_completed"
    TASK_FAILED = "task_failed"
    APPROVAL_WAITING = "approval_waiting"
    INPUT_WAITING = "input_waiting"


@dataclass(frozen=True)
class Notification:
    kind: NotificationKind
    title: str
    body: str
    session_id: str | None


def notification_for(
    event: Mapping[str, Any], *, conversation: str, window_active: bool, enabled: bool
) -> Notification | None:
    """The notification a ``SessionEvent`` calls for, or None. ``conversation`` names it for the user
    (its title or folder); ``window_active``: Cowork's window has the focus now."""
    if not enabled or window_active:
        return None
    kind = event.get("eventType")
    payload = event.get("payload")
    payload = payload if isinstance(payload, Mapping) else {}
    session_id = event.get("sessionId") if isinstance(event.get("sessionId"), str) else None
    if kind == "task_completed":
        return Notification(
            NotificationKind.TASK_COMPLETED,
            translate("Notifications", "Task finished"),
            _cut(translate("Notifications", "{conversation}: done.").format(conversation=conversation)),
            session_id,
        )
    if kind == "task_failed":
        error = payload.get("error")
        why = error.get("message") if isinstance(error, Mapping) else None
        body = translate("Notifications", "{conversation}: the task stopped.").format(
            conversation=conversation
        )
        if isinstance(why, str) and why:
            body = f"{body} {why}"
        return Notification(
            NotificationKind.TASK_FAILED, translate("Notifications", "Task failed"), _cut(body), session_id
        )
    if kind == "approval_requested":
        summary = payload.get("actionSummary")
        body = translate("Notifications", "{conversation}: {action}").format(
            conversation=conversation,
            action=summary
            if isinstance(summary, str) and summary
            else translate("Notifications", "an action"),
        )
        return Notification(
            NotificationKind.APPROVAL_WAITING,
            translate("Notifications", "Approval needed"),
            _cut(body),
            session_id,
        )
    if kind == "elicitation_requested":
        server = payload.get("serverName")
        body = translate("Notifications", "{conversation}: {server} asks for your input.").format(
            conversation=conversation, server=server if isinstance(server, str) else "MCP"
        )
        return Notification(
            NotificationKind.INPUT_WAITING, translate("Notifications", "Input needed"), _cut(body), session_id
        )
    return None


def _cut(text: str) -> str:
    return text if len(text) <= MAX_BODY_CHARS else text[: MAX_BODY_CHARS - 1].rstrip() + "…"
