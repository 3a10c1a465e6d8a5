"""The session checklist (seed 002 "Session Checklist Primitive"): its rules (:mod:`.model`), the
verification nudge (:mod:`.nudge`) and the session tools that manage it (:mod:`.tools`)."""

from .model import ChecklistRejected, create_checklist, parse_items, update_checklist
from .nudge import NEXT_TURN_REMINDER, RESULT_REMINDER, apply_nudge, verification_nudge_needed
from .tools import SESSION_TOOL_DEFINITIONS, SessionToolOutcome, run_session_tool

__all__ = [
    "NEXT_TURN_REMINDER",
    "RESULT_REMINDER",
    "SESSION_TOOL_DEFINITIONS",
    "ChecklistRejected",
    "SessionToolOutcome",
    "apply_nudge",
    "create_checklist",
    "parse_items",
    "run_session_tool",
    "update_checklist",
    "verification_nudge_needed",
]
