"""The session and task state tables as seeds 000 (§3.3) and 004 (Session) write them, checked against
:class:`SessionMachine`.

The tables below are copied by hand from the seeds' text, not from ``machine.py``: every edge a seed
draws must be allowed, and a sample of edges no seed draws must be refused.
"""

from __future__ import annotations

import pytest

from agent_runtime.agent_host.session.machine import IllegalTransition, SessionMachine
from contracts.enums import SessionStatus as S
from contracts.enums import TaskStatus as T

# Seed 000 §3.3, the session-level table (Transition | Guard | Action), row by row.
SEED_000_SESSION = [
    (S.SESSION_CREATED, S.SESSION_RUNNING),  # policy valid, compatibility ok
    (S.SESSION_RUNNING, S.SESSION_PAUSED),  # network failure or policy expiry
    (S.SESSION_PAUSED, S.SESSION_RUNNING),  # ResumeSession with a valid refreshed policy
    (S.SESSION_PAUSED, S.SESSION_CANCELLED),  # user cancels
    (S.SESSION_RUNNING, S.SESSION_COMPLETED),  # Shutdown, no active task
    (S.SESSION_RUNNING, S.SESSION_CANCELLED),  # Shutdown during an active task
    (S.SESSION_RUNNING, S.SESSION_FAILED),  # unrecoverable error (e.g. resume fails)
]

# Seed 004, "Session state machine": SESSION_PAUSED leads to each of the three ends.
SEED_004_SESSION = [
    (S.SESSION_CREATED, S.SESSION_RUNNING),
    (S.SESSION_RUNNING, S.SESSION_PAUSED),
    (S.SESSION_PAUSED, S.SESSION_COMPLETED),
    (S.SESSION_PAUSED, S.SESSION_FAILED),
    (S.SESSION_PAUSED, S.SESSION_CANCELLED),
]

# Seed 000 §3.3, the task-level diagram (within SESSION_RUNNING), arrow by arrow.
SEED_000_TASK = [
    (T.IDLE, T.TASK_RUNNING),  # StartTask
    (T.TASK_RUNNING, T.WAITING_FOR_LLM),  # build and send the LLM request
    (T.WAITING_FOR_LLM, T.PROCESSING_RESPONSE),  # response received
    (T.WAITING_FOR_LLM, T.TASK_FAILED),  # non-retryable LLM error
    (T.PROCESSING_RESPONSE, T.TASK_COMPLETED),  # text-only response
    (T.PROCESSING_RESPONSE, T.CHECKING_POLICY),  # tool calls in the response
    (T.CHECKING_POLICY, T.WAITING_FOR_APPROVAL),  # approval required
    (T.CHECKING_POLICY, T.EXECUTING_TOOLS),  # all passed / some denied, others proceed
    (T.WAITING_FOR_APPROVAL, T.EXECUTING_TOOLS),  # approved / denied (recorded)
    (T.EXECUTING_TOOLS, T.TASK_RUNNING),  # all tools complete → checkpoint → next step
    (T.TASK_RUNNING, T.TASK_FAILED),  # maxSteps exceeded
    (T.TASK_RUNNING, T.TASK_CANCELLED),  # CancelTask received
    (T.TASK_COMPLETED, T.IDLE),  # history uploaded
    (T.TASK_FAILED, T.IDLE),
    (T.TASK_CANCELLED, T.IDLE),
]

# Edges no seed draws (and no seed text asks for): each must be refused, leaving the state as it was.
REFUSED_SESSION = [
    (S.SESSION_CREATED, S.SESSION_PAUSED),  # nothing runs yet, nothing to pause
    (S.SESSION_CREATED, S.SESSION_COMPLETED),
    (S.SESSION_COMPLETED, S.SESSION_RUNNING),  # an ended session never comes back
    (S.SESSION_CANCELLED, S.SESSION_RUNNING),
    (S.SESSION_FAILED, S.SESSION_RUNNING),
    (S.SESSION_COMPLETED, S.SESSION_FAILED),
    (S.SESSION_CANCELLED, S.SESSION_PAUSED),
    (S.SESSION_FAILED, S.SESSION_PAUSED),
    (S.SESSION_RUNNING, S.SESSION_CREATED),
    (S.SESSION_PAUSED, S.SESSION_CREATED),
]

REFUSED_TASK = [
    (T.IDLE, T.WAITING_FOR_LLM),  # no step before StartTask
    (T.IDLE, T.EXECUTING_TOOLS),
    (T.IDLE, T.TASK_COMPLETED),
    (T.TASK_RUNNING, T.EXECUTING_TOOLS),  # tools only after the policy check
    (T.WAITING_FOR_LLM, T.EXECUTING_TOOLS),
    (T.PROCESSING_RESPONSE, T.WAITING_FOR_APPROVAL),  # approval only after the policy check
    (T.CHECKING_POLICY, T.TASK_COMPLETED),
    (T.WAITING_FOR_APPROVAL, T.TASK_COMPLETED),
    (T.EXECUTING_TOOLS, T.WAITING_FOR_LLM),  # back to TASK_RUNNING first (checkpoint)
    (T.TASK_COMPLETED, T.TASK_RUNNING),  # a new task passes through IDLE
    (T.TASK_FAILED, T.WAITING_FOR_LLM),
    (T.TASK_CANCELLED, T.TASK_COMPLETED),
]


def _name(edge: tuple[object, object]) -> str:
    source, target = edge
    return f"{getattr(source, 'value', source)}->{getattr(target, 'value', target)}"


@pytest.mark.parametrize("edge", sorted(set(SEED_000_SESSION + SEED_004_SESSION)), ids=_name)
def test_every_session_edge_of_seeds_000_and_004_is_allowed(edge: tuple[S, S]) -> None:
    source, target = edge
    machine = SessionMachine(session=source)
    machine.to_session(target)
    assert machine.session is target


@pytest.mark.parametrize("edge", SEED_000_TASK, ids=_name)
def test_every_task_edge_of_seed_000_is_allowed(edge: tuple[T, T]) -> None:
    source, target = edge
    machine = SessionMachine(session=S.SESSION_RUNNING, task=source)
    machine.to_task(target)
    assert machine.task is target


@pytest.mark.parametrize("edge", REFUSED_SESSION, ids=_name)
def test_a_session_edge_no_seed_draws_is_refused(edge: tuple[S, S]) -> None:
    source, target = edge
    machine = SessionMachine(session=source)
    with pytest.raises(IllegalTransition):
        machine.to_session(target)
    assert machine.session is source


@pytest.mark.parametrize("edge", REFUSED_TASK, ids=_name)
def test_a_task_edge_no_seed_draws_is_refused(edge: tuple[T, T]) -> None:
    source, target = edge
    machine = SessionMachine(session=S.SESSION_RUNNING, task=source)
    with pytest.raises(IllegalTransition):
        machine.to_task(target)
    assert machine.task is source


@pytest.mark.parametrize("end", [S.SESSION_COMPLETED, S.SESSION_CANCELLED, S.SESSION_FAILED])
def test_a_paused_session_whose_task_was_cancelled_can_still_end(end: S) -> None:
    """Seed 004: PAUSED → each end. The task the pause suspended is stopped first (CancelTask)."""
    machine = SessionMachine(session=S.SESSION_PAUSED, task=T.TASK_RUNNING)
    machine.to_task(T.TASK_CANCELLED)
    machine.to_session(end)
    assert (machine.session, machine.task) == (end, T.TASK_CANCELLED)
