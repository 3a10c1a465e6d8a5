"""The session checklist as the desktop shows it: read-only, beside the conversation (seed 002
"UI/event model"). Qt-free; the window's ``ChecklistView`` draws it.

Live, it follows the ``task_list_created``, ``task_list_updated`` and ``task_list_verification_nudged``
events, each of which carries the whole checklist. A past conversation has no events, only its
``session_history`` messages: there the checklist is the one the last successful ``task_list_create``
or ``task_list_update`` result returned to the model (the runtime answers those calls with the whole
checklist as JSON), which is the same state the events carried.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["CHECKLIST_EVENTS", "ChecklistEntry", "ChecklistState"]

CHECKLIST_EVENTS = frozenset({"task_list_created", "task_list_updated", "task_list_verification_nudged"})
_CHANGING_TOOLS = frozenset({"task_list_create", "task_list_update"})
_STATUSES = frozenset({"pending", "in_progress", "completed"})


@dataclass(frozen=True, slots=True)
class ChecklistEntry:
    item_id: str
    title: str
    status: str
    """pending, in_progress or completed."""
    kind: str
    """implementation, verification or other."""

    @property
    def glyph(self) -> str:
        return {"completed": "☑", "in_progress": "▶"}.get(self.status, "☐")


def _entries(items: object) -> list[ChecklistEntry] | None:
    if not isinstance(items, list):
        return None
    entries = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("title"), str):
            return None
        status = item.get("status") if item.get("status") in _STATUSES else "pending"
        entries.append(
            ChecklistEntry(
                item_id=str(item.get("id") or ""),
                title=item["title"],
                status=str(status),
                kind=str(item.get("kind") or "implementation"),
            )
        )
    return entries


class ChecklistState:
    """The latest checklist of one conversation; observers are called after each change."""

    def __init__(self) -> None:
        self.entries: list[ChecklistEntry] = []
        self.verification_nudged = False
        self._observers: list[Callable[[], None]] = []

    def subscribe(self, observer: Callable[[], None]) -> None:
        if observer not in self._observers:
            self._observers.append(observer)

    def unsubscribe(self, observer: Callable[[], None]) -> None:
        if observer in self._observers:
            self._observers.remove(observer)

    @property
    def done(self) -> int:
        return sum(entry.status == "completed" for entry in self.entries)

    def _set(self, entries: list[ChecklistEntry], nudged: bool) -> None:
        if entries == self.entries and nudged == self.verification_nudged:
            return
        self.entries, self.verification_nudged = entries, nudged
        for observer in list(self._observers):
            observer()

    def apply(self, event_type: str, payload: Mapping[str, Any]) -> None:
        """A ``task_list_*`` event: its payload's ``checklist`` is the whole new state."""
        if event_type not in CHECKLIST_EVENTS:
            return
        checklist = payload.get("checklist")
        if not isinstance(checklist, dict):
            return
        entries = _entries(checklist.get("items"))
        if entries is not None:
            self._set(entries, bool(checklist.get("verificationNudgeNeeded")))

    def load_history(self, messages: Iterable[Mapping[str, Any]]) -> None:
        """The checklist of a stored conversation, from its task_list tool results (see the module)."""
        entries: list[ChecklistEntry] = []
        nudged = False
        for message in messages:
            if message.get("role") != "tool" or message.get("toolName") not in _CHANGING_TOOLS:
                continue
            if message.get("toolStatus") != "succeeded":
                continue
            first = str(message.get("content") or "").split("\n\n", 1)[0]
            try:
                data = json.loads(first)
            except ValueError:
                continue
            found = _entries(data.get("items")) if isinstance(data, dict) else None
            if found:
                entries, nudged = found, bool(data.get("verificationNudgeNeeded"))
        self._set(entries, nudged)
