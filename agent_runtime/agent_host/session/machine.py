"""The session's state machine lives in the session runtime
(:mod:`agent_runtime.agent_host.session_runtime.machine`), below the loop that moves it; re-exported
here for the session's own use."""

from __future__ import annotations

from agent_runtime.agent_host.session_runtime.machine import (
    SESSION_TRANSITIONS,
    TASK_TRANSITIONS,
    TERMINAL_SESSION,
    TERMINAL_TASK,
    IllegalTransition,
    SessionMachine,
)

__all__ = [
    "SESSION_TRANSITIONS",
    "TASK_TRANSITIONS",
    "TERMINAL_SESSION",
    "TERMINAL_TASK",
    "IllegalTransition",
    "SessionMachine",
]
