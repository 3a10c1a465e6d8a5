"""The two-level state machine (seed 000 §3.3): every edge of the seed is allowed, anything else is
refused and changes nothing."""

from __future__ import annotations

import pytest

from agent_runtime.agent_host.session.machine import (
    SESSION_TRANSITIONS,
    TASK_TRANSITIONS,
    IllegalTransition,
    SessionMachine,
)
from contracts.enums import SessionStatus as S
from contracts.enums import TaskStatus as T
from contracts.errors import ErrorCode

SEED_SESSION_EDGES = [
    (S.SESSION_CREATED, S.SESSION_RUNNING),
    (S.SESSION_RUNNING, S.SESSION_PAUSED),
    (S.SESSION_PAUSED, S.SESSION_RUNNING),
    (S.SESSION_PAUSED, S.SESSION_CANCELLED),
    (S.SESSION_RUNNING, S.SESSION_COMPLETED),
    (S.SESSION_RUNNING, S.SESSION_CANCELLED),
    (S.SESSION_RUNNING, S.SESSION_FAILED),
]

SEED_TASK_EDGES = [
    (T.IDLE, T.TASK_RUNNING),
    (T.TASK_RUNNING, T.WAITING_FOR_LLM),
    (T.WAITING_FOR_LLM, T.PROCESSING_RESPONSE),
    (T.WAITING_FOR_LLM, T.TASK_FAILED),
    (T.PROCESSING_RESPONSE, T.TASK_COMPLETED),
    (T.PROCESSING_RESPONSE, T.CHECKING_POLICY),
    (T.CHECKING_POLICY, T.WAITING_FOR_APPROVAL),
    (T.CHECKING_POLICY, T.EXECUTING_TOOLS),
    (T.WAITING_FOR_APPROVAL, T.EXECUTING_TOOLS),
    (T.EXECUTING_TOOLS, T.TASK_RUNNING),
    (T.TASK_RUNNING, T.TASK_FAILED),
    (T.TASK_RUNNING, T.TASK_CANCELLED),
    (T.TASK_COMPLETED, T.IDLE),
    (T.TASK_FAILED, T.IDLE),
    (T.TASK_CANCELLED, T.IDLE),
]


@pytest.mark.parametrize(("source", "target"), SEED_SESSION_EDGES)
def test_every_session_edge_of_the_seed_is_allowed(source: S, target: S) -> None:
    machine = SessionMachine(session=source)
    machine.to_session(target)
    assert machine.session is target


@pytest.mark.parametrize(("source", "target"), SEED_TASK_EDGES)
def test_every_task_edge_of_the_seed_is_allowed(source: T, target: T) -> None:
    machine = SessionMachine(session=S.SESSION_RUNNING, task=source)
    machine.to_task(target)
    assert machine.task is target


@pytest.mark.parametrize(
    ("source", "target"),
    [(s, t) for s in S for t in S if t not in SESSION_TRANSITIONS[s]],
)
def test_a_session_edge_outside_the_table_is_refused_and_changes_nothing(source: S, target: S) -> None:
    machine = SessionMachine(session=source)
    with pytest.raises(IllegalTransition) as caught:
        machine.to_session(target)
    assert caught.value.code is ErrorCode.INVALID_REQUEST
    assert machine.session is source
    assert source.value in caught.value.shape.message
    assert target.value in caught.value.shape.message


@pytest.mark.parametrize(
    ("source", "target"),
    [(s, t) for s in T for t in T if t not in TASK_TRANSITIONS[s]],
)
def test_a_task_edge_outside_the_table_is_refused(source: T, target: T) -> None:
    machine = SessionMachine(session=S.SESSION_RUNNING, task=source)
    with pytest.raises(IllegalTransition):
        machine.to_task(target)
    assert machine.task is source


def test_ended_sessions_go_nowhere() -> None:
    for ended in (S.SESSION_COMPLETED, S.SESSION_FAILED, S.SESSION_CANCELLED):
        assert not SESSION_TRANSITIONS[ended]


def test_no_step_advances_while_the_session_is_paused_but_the_task_can_be_stopped() -> None:
    machine = SessionMachine(session=S.SESSION_PAUSED, task=T.TASK_RUNNING)
    with pytest.raises(IllegalTransition):
        machine.to_task(T.WAITING_FOR_LLM)
    machine.to_task(T.TASK_CANCELLED)
    assert machine.task is T.TASK_CANCELLED
