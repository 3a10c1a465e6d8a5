"""``task_list_create``, ``task_list_update``, ``task_list_list``: session tools the agent host
answers from the session's checklist (see :mod:`contracts.checklist` for why they need no capability
and never reach the tool runtime).

:func:`run_session_tool` is pure: it takes the checklist as it stands and returns the result the
model reads, the new checklist and the events to emit; the loop stores and emits them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from contracts.checklist import SessionChecklist, SessionToolName, TaskListEventPayload
from contracts.enums import ToolStatus
from contracts.errors import ErrorCode
from contracts.events import EventType
from contracts.tools import ToolCall, ToolDefinition, ToolError, ToolResult

from .model import ChecklistRejected, create_checklist, new_item_id, update_checklist
from .nudge import RESULT_REMINDER, apply_nudge

__all__ = ["SESSION_TOOL_DEFINITIONS", "SessionToolOutcome", "run_session_tool"]

_ITEM_SCHEMA = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "description": "Keep an existing item's id; omit it for a new item."},
        "title": {"type": "string", "description": "What the step is, in a few words."},
        "status": {"type": "string", "enum": ["pending", "in_progress", "completed"], "default": "pending"},
        "kind": {
            "type": "string",
            "enum": ["implementation", "verification", "other"],
            "default": "implementation",
            "description": "verification for steps that check the work (run tests, read results back).",
        },
    },
    "required": ["title"],
    "additionalProperties": False,
}
_ITEMS_SCHEMA = {
    "type": "object",
    "properties": {"items": {"type": "array", "items": _ITEM_SCHEMA, "minItems": 1}},
    "required": ["items"],
    "additionalProperties": False,
}

SESSION_TOOL_DEFINITIONS: tuple[ToolDefinition, ...] = (
    ToolDefinition(
        tool_name=SessionToolName.TASK_LIST_CREATE.value,
        description=(
            "Create this session's checklist for multi-step work: the ordered steps, at most one"
            " in_progress. Fails if a checklist already exists (use task_list_update)."
        ),
        input_schema=_ITEMS_SCHEMA,
    ),
    ToolDefinition(
        tool_name=SessionToolName.TASK_LIST_UPDATE.value,
        description=(
            "Replace the whole checklist with its new ordered state (keep each existing item's id;"
            " mark progress with status). At most one item in_progress."
        ),
        input_schema=_ITEMS_SCHEMA,
    ),
    ToolDefinition(
        tool_name=SessionToolName.TASK_LIST_LIST.value,
        description="Show this session's checklist as it stands.",
        input_schema={"type": "object", "properties": {}, "additionalProperties": False},
    ),
)


@dataclass(slots=True)
class SessionToolOutcome:
    result: ToolResult
    checklist: SessionChecklist | None
    events: list[tuple[EventType, dict[str, Any]]] = field(default_factory=list)


def _view(checklist: SessionChecklist | None) -> dict[str, object]:
    if checklist is None:
        return {"items": [], "verificationNudgeNeeded": False}
    return {
        "items": [item.to_wire() for item in checklist.items],
        "verificationNudgeNeeded": checklist.verification_nudge_needed,
    }


def run_session_tool(
    call: ToolCall,
    checklist: SessionChecklist | None,
    *,
    now: datetime,
    session_id: str,
    task_id: str,
    step_id: str,
    new_id: Callable[[], str] = new_item_id,
) -> SessionToolOutcome:
    """Answer one session tool call (its name is one of ``SessionToolName``)."""

    def result(status: ToolStatus, text: str | None = None, error: ToolError | None = None) -> ToolResult:
        return ToolResult(
            tool_name=call.tool_name,
            session_id=session_id,
            task_id=task_id,
            step_id=step_id,
            tool_call_id=call.tool_call_id,
            status=status,
            output_text=text,
            error=error,
        )

    name = SessionToolName(call.tool_name)
    if name is SessionToolName.TASK_LIST_LIST:
        text = json.dumps(_view(checklist), ensure_ascii=False)
        return SessionToolOutcome(result(ToolStatus.SUCCEEDED, text), checklist)
    try:
        if name is SessionToolName.TASK_LIST_CREATE:
            changed = create_checklist(checklist, call.arguments, now=now, new_id=new_id)
            event = EventType.TASK_LIST_CREATED
        else:
            changed = update_checklist(checklist, call.arguments, now=now, new_id=new_id)
            event = EventType.TASK_LIST_UPDATED
    except ChecklistRejected as exc:
        error = ToolError(code=ErrorCode.INVALID_REQUEST, message=str(exc))
        return SessionToolOutcome(result(ToolStatus.FAILED, error=error), checklist)
    changed, raised = apply_nudge(changed)
    payload = TaskListEventPayload(checklist=changed).to_wire()
    events: list[tuple[EventType, dict[str, Any]]] = [(event, payload)]
    if raised:
        events.append((EventType.TASK_LIST_VERIFICATION_NUDGED, payload))
    text = json.dumps(_view(changed), ensure_ascii=False)
    if changed.verification_nudge_needed:
        text += "\n\n" + RESULT_REMINDER
    return SessionToolOutcome(result(ToolStatus.SUCCEEDED, text), changed, events)
