"""The session checklist (seed 002 "Session Checklist Primitive") on the wire.

A lightweight, agent-managed list of what the current work consists of, kept by the agent host for
the session. It is separate from any plan and from anything in the backend: it lives only in the
session's checkpoint and in the ``task_list_*`` events, each of which carries the whole checklist so
that a reader (the desktop) rebuilds the latest state from events alone.

**Session tools.** The model manages it through three tools — ``task_list_create``,
``task_list_update``, ``task_list_list`` — that are a tool class of their own: *session tools*. They
are answered by the agent host from session state, never routed to the tool runtime, and need no OS
capability: they read or write nothing on the computer, so there is no ``Capability`` (and no
approval rule) for them in the policy bundle. They are not a way around the policy either: they are
refused like every other call of a step once the policy bundle has expired, a tool runtime tool can
never take their names (those are ``ToolName``'s), and they change nothing but the checklist.

They are offered only to executing work — the tools of a ``StartTask`` task. A path that only chats
(no task running the loop) is not offered them; in this runtime every model call belongs to a task,
so that is any request made outside the task loop.
"""

from __future__ import annotations

import json
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import Field

from contracts._base import UtcDatetime, WireModel

__all__ = [
    "SESSION_TOOL_NAMES",
    "ChecklistItem",
    "ChecklistItemKind",
    "ChecklistItemStatus",
    "SessionChecklist",
    "SessionToolName",
    "TaskListEventPayload",
]


class SessionToolName(StrEnum):
    """Tools the agent host answers itself, from session state (no capability; see the module doc)."""

    TASK_LIST_CREATE = "task_list_create"
    TASK_LIST_UPDATE = "task_list_update"
    TASK_LIST_LIST = "task_list_list"


SESSION_TOOL_NAMES = frozenset(name.value for name in SessionToolName)


class ChecklistItemStatus(StrEnum):
    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"


class ChecklistItemKind(StrEnum):
    IMPLEMENTATION = "implementation"
    """The default: work that changes something."""
    VERIFICATION = "verification"
    """Checking the work (running the tests, reading the result back)."""
    OTHER = "other"


class ChecklistItem(WireModel):
    id: str = Field(min_length=1, max_length=100)
    title: str = Field(min_length=1, max_length=500)
    status: ChecklistItemStatus = ChecklistItemStatus.PENDING
    kind: ChecklistItemKind = ChecklistItemKind.IMPLEMENTATION


class SessionChecklist(WireModel):
    """The checklist state the agent host keeps for a session (seed 002 "checklist" bucket: items,
    nudge state, timestamps)."""

    items: list[ChecklistItem] = Field(min_length=1)
    created_at: UtcDatetime
    updated_at: UtcDatetime
    verification_nudge_needed: bool = False
    """Seed 002's ``verificationNudgeNeeded``: every implementation item is done and nothing verifies
    them. Cleared when the condition stops holding."""
    reminder_pending: bool = False
    """The next model request still has to carry the short verification reminder (injected once)."""

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> SessionChecklist:
        # Through JSON: strict models take date-times as ISO strings only on that path.
        return cls.model_validate_json(json.dumps(data))

    def touched(self, now: datetime) -> SessionChecklist:
        return self.model_copy(update={"updated_at": now})


class TaskListEventPayload(WireModel):
    """``task_list_created``, ``task_list_updated`` and ``task_list_verification_nudged``: the whole
    checklist as it now stands (seed 002 "UI/event model")."""

    checklist: SessionChecklist
