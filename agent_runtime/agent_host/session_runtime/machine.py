"""The two-level state machine of seed 000 §3.3, as explicit transition tables (owned by the session
runtime, below the loop: the loop moves the task along them, the session moves the session).

A transition that is not in a table is refused with :class:`IllegalTransition` and the state is left
as it was: a bug shows up as a clear error instead of a session in a state nobody designed.

Beyond the seed's diagram, three kinds of edge exist because the seed's own text asks for them:

* ``SESSION_CREATED → SESSION_FAILED``: the handshake or the policy bundle fails (§3.2 steps 4–5).
* A step that cannot go on because the session pauses (gateway unreachable, policy expired — §4.6,
  §8.6) or the task is cancelled goes back to ``TASK_RUNNING`` / on to ``TASK_CANCELLED`` from
  wherever it stood; on resume the loop starts the step again from the last checkpoint.
* A finished task's state stays visible to ``GetSessionState`` until the next ``StartTask``, which
  passes through ``IDLE`` (the seed's "History uploaded" edge) into ``TASK_RUNNING``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from contracts.enums import SessionStatus, TaskStatus
from contracts.errors import ErrorCode

from .errors import StateConflict

__all__ = [
    "SESSION_TRANSITIONS",
    "TASK_TRANSITIONS",
    "TERMINAL_SESSION",
    "TERMINAL_TASK",
    "IllegalTransition",
    "SessionMachine",
]

S = SessionStatus
T = TaskStatus

SESSION_TRANSITIONS: Mapping[SessionStatus, frozenset[SessionStatus]] = MappingProxyType(
    {
        S.SESSION_CREATED: frozenset({S.SESSION_RUNNING, S.SESSION_FAILED}),
        S.SESSION_RUNNING: frozenset(
            {S.SESSION_PAUSED, S.SESSION_COMPLETED, S.SESSION_CANCELLED, S.SESSION_FAILED}
        ),
        # Seed 004: a paused session may end in each of the three ways; seed 000 names CANCELLED
        # (the user cancels) and FAILED follows from its "resume fails".
        S.SESSION_PAUSED: frozenset(
            {S.SESSION_RUNNING, S.SESSION_COMPLETED, S.SESSION_CANCELLED, S.SESSION_FAILED}
        ),
        S.SESSION_COMPLETED: frozenset(),
        S.SESSION_FAILED: frozenset(),
        S.SESSION_CANCELLED: frozenset(),
    }
)

_STOPPABLE = frozenset({T.TASK_RUNNING, T.TASK_CANCELLED, T.TASK_FAILED})
"""Where a step in progress may go when the session pauses or the task is cancelled or fails."""

TASK_TRANSITIONS: Mapping[TaskStatus, frozenset[TaskStatus]] = MappingProxyType(
    {
        T.IDLE: frozenset({T.TASK_RUNNING}),
        T.TASK_RUNNING: frozenset({T.WAITING_FOR_LLM, T.TASK_COMPLETED, T.TASK_FAILED, T.TASK_CANCELLED}),
        T.WAITING_FOR_LLM: frozenset({T.PROCESSING_RESPONSE} | _STOPPABLE),
        T.PROCESSING_RESPONSE: frozenset({T.TASK_COMPLETED, T.CHECKING_POLICY} | _STOPPABLE),
        T.CHECKING_POLICY: frozenset({T.WAITING_FOR_APPROVAL, T.EXECUTING_TOOLS} | _STOPPABLE),
        T.WAITING_FOR_APPROVAL: frozenset({T.EXECUTING_TOOLS} | _STOPPABLE),
        T.EXECUTING_TOOLS: frozenset({T.TASK_RUNNING, T.TASK_CANCELLED, T.TASK_FAILED}),
        T.TASK_COMPLETED: frozenset({T.IDLE}),
        T.TASK_FAILED: frozenset({T.IDLE}),
        T.TASK_CANCELLED: frozenset({T.IDLE}),
    }
)

TERMINAL_SESSION = frozenset({S.SESSION_COMPLETED, S.SESSION_FAILED, S.SESSION_CANCELLED})
TERMINAL_TASK = frozenset({T.TASK_COMPLETED, T.TASK_FAILED, T.TASK_CANCELLED})


class IllegalTransition(StateConflict):
    """A transition the tables do not allow; nothing changed."""

    def __init__(self, level: str, current: str, wanted: str) -> None:
        super().__init__(
            f"The {level} cannot go from {current} to {wanted}.",
            code=ErrorCode.INVALID_REQUEST,
            level=level,
            **{"from": current, "to": wanted},
        )


class SessionMachine:
    """The session's status and its task's status, changed only along the tables."""

    def __init__(self, session: SessionStatus = S.SESSION_CREATED, task: TaskStatus = T.IDLE) -> None:
        self._session = session
        self._task = task

    @property
    def session(self) -> SessionStatus:
        return self._session

    @property
    def task(self) -> TaskStatus:
        return self._task

    def can_session(self, wanted: SessionStatus) -> bool:
        return wanted in SESSION_TRANSITIONS[self._session]

    def can_task(self, wanted: TaskStatus) -> bool:
        return wanted in TASK_TRANSITIONS[self._task]

    def to_session(self, wanted: SessionStatus) -> None:
        if not self.can_session(wanted):
            raise IllegalTransition("session", self._session.value, wanted.value)
        self._session = wanted

    def to_task(self, wanted: TaskStatus) -> None:
        if self._session is not S.SESSION_RUNNING and wanted not in TERMINAL_TASK | {T.TASK_RUNNING}:
            # While paused (or ended) no step may advance; a task may only be stopped or reset.
            raise IllegalTransition("task", self._task.value, wanted.value)
        if not self.can_task(wanted):
            raise IllegalTransition("task", self._task.value, wanted.value)
        self._task = wanted
