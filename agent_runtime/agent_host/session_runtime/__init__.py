"""The session runtime (seed 002): the one owner of a session's mutable state, in explicit buckets, with
the session and task state machine, tool availability, and the ``session_runtime_v2`` snapshot and its
restore order.

Layering: the loop reads and writes the session through this package; the session (JSON-RPC host)
builds it and uses both; this package imports neither. Names load on first use, so the JSON-RPC
dispatcher can take :class:`StateConflict` from here before the wire models are loaded.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .errors import StateConflict
    from .machine import TERMINAL_SESSION, TERMINAL_TASK, IllegalTransition, SessionMachine
    from .restore import RestorePoint, RestoreSource, find_restore_point, from_legacy_checkpoint
    from .runtime import FailureMemory, LoopState, SessionRuntime, TaskView
    from .tools import RenderContext, RenderedTools, ToolAvailability

_HOMES = {
    "StateConflict": ".errors",
    "TERMINAL_SESSION": ".machine",
    "TERMINAL_TASK": ".machine",
    "IllegalTransition": ".machine",
    "SessionMachine": ".machine",
    "RestorePoint": ".restore",
    "RestoreSource": ".restore",
    "find_restore_point": ".restore",
    "from_legacy_checkpoint": ".restore",
    "FailureMemory": ".runtime",
    "LoopState": ".runtime",
    "SessionRuntime": ".runtime",
    "TaskView": ".runtime",
    "RenderContext": ".tools",
    "RenderedTools": ".tools",
    "ToolAvailability": ".tools",
}

__all__ = [
    "TERMINAL_SESSION",
    "TERMINAL_TASK",
    "FailureMemory",
    "IllegalTransition",
    "LoopState",
    "RenderContext",
    "RenderedTools",
    "RestorePoint",
    "RestoreSource",
    "SessionMachine",
    "SessionRuntime",
    "StateConflict",
    "TaskView",
    "ToolAvailability",
    "find_restore_point",
    "from_legacy_checkpoint",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home, __name__), name)
