"""Decisions reach the Approval Service in the background, with retries, never blocking a tool and
never raising (seed 000 §10.4, §11)."""

from __future__ import annotations

import asyncio
import logging
import random

import pytest

from agent_runtime.agent_host.approval import ApprovalGate
from contracts.approvals import ApprovalDecisionRecord
from contracts.enums import ApprovalDecision, ApprovalScope, Capability

from .approval_fakes import (
    SESSION_ID,
    WAIT_S,
    FlakyBackend,
    RecordingEmitter,
    Rejected,
    Unreachable,
    ask,
    decide_next,
    fixed_clock,
    shell_outcome,
)


def make_gate(
    emitter: RecordingEmitter, backend: FlakyBackend, *, attempts: int = 5, base_delay_s: float = 0.001
) -> ApprovalGate:
    return ApprovalGate(
        session_id=SESSION_ID,
        emit=emitter,
        persist=backend.record_approval,
        timeout_s=60,
        clock=fixed_clock,
        persist_attempts=attempts,
        persist_base_delay_s=base_delay_s,
        persist_rng=random.Random(7),
    )


async def approve_one(
    gate: ApprovalGate, emitter: RecordingEmitter, command: str = "pytest -q"
) -> ApprovalDecisionRecord:
    return await decide_next(
        gate, emitter, ApprovalDecision.APPROVED, ApprovalScope.SESSION, ask(gate, command)
    )


async def test_every_decision_is_posted_to_the_approval_service() -> None:
    emitter, backend = RecordingEmitter(), FlakyBackend()
    gate = make_gate(emitter, backend)
    asked = await approve_one(gate, emitter)
    covered = await asyncio.wait_for(
        gate.request(
            shell_outcome(), capability=Capability.SHELL_EXEC, grant_key="pytest -q", task_id="t", step_id="s"
        ),
        WAIT_S,
    )

    await asyncio.wait_for(gate.aclose(), WAIT_S)

    assert backend.stored == [asked, covered]
    assert gate.persister is not None
    assert gate.persister.persisted == 2


async def test_a_failed_post_is_retried_until_it_succeeds() -> None:
    emitter = RecordingEmitter()
    backend = FlakyBackend(failures=[Unreachable(), OSError("connection reset"), Unreachable()])
    gate = make_gate(emitter, backend)

    record = await approve_one(gate, emitter)
    await asyncio.wait_for(backend.stored_event.wait(), WAIT_S)

    assert backend.stored == [record]
    assert len(backend.calls) == 4
    await gate.aclose()


async def test_persistence_gives_up_after_its_attempts_without_raising(
    caplog: pytest.LogCaptureFixture,
) -> None:
    emitter = RecordingEmitter()
    backend = FlakyBackend(failures=[Unreachable() for _ in range(10)])
    gate = make_gate(emitter, backend, attempts=3)

    with caplog.at_level(logging.WARNING, logger="agent_runtime.agent_host.approval"):
        record = await approve_one(gate, emitter)
        assert gate.persister is not None
        await asyncio.wait_for(gate.persister.wait_idle(), WAIT_S)

    assert record.decision is ApprovalDecision.APPROVED
    assert len(backend.calls) == 3
    assert backend.stored == []
    assert gate.persister.abandoned == 1
    assert any(r.levelno == logging.WARNING and "not persisted" in r.getMessage() for r in caplog.records)
    # The decision survives in the records the checkpoint carries.
    assert gate.records[-1] == record


async def test_a_rejected_record_is_not_sent_again() -> None:
    emitter = RecordingEmitter()
    backend = FlakyBackend(failures=[Rejected(), Rejected()])
    gate = make_gate(emitter, backend)

    await approve_one(gate, emitter)
    await asyncio.wait_for(gate.aclose(), WAIT_S)

    assert len(backend.calls) == 1
    assert backend.stored == []


async def test_a_slow_backend_never_holds_up_the_decision() -> None:
    emitter = RecordingEmitter()
    backend = FlakyBackend(hang=True)
    gate = make_gate(emitter, backend)

    record = await approve_one(gate, emitter)

    assert record.decision is ApprovalDecision.APPROVED
    assert backend.stored == []  # still in flight
    backend.release.set()
    await asyncio.wait_for(backend.stored_event.wait(), WAIT_S)
    await gate.aclose()


async def test_aclose_cuts_a_long_backoff_short_for_one_last_attempt() -> None:
    emitter = RecordingEmitter()
    backend = FlakyBackend(failures=[Unreachable()])
    # A backoff of up to 100 s: only aclose's last chance can deliver this record within the test.
    gate = make_gate(emitter, backend, base_delay_s=100.0)
    record = await approve_one(gate, emitter)
    await asyncio.wait_for(backend.called.wait(), WAIT_S)

    await asyncio.wait_for(gate.aclose(timeout_s=2.0), WAIT_S)

    assert backend.stored == [record]
    assert len(backend.calls) == 2


async def test_aclose_waits_only_a_bounded_time_for_a_backend_that_never_answers(
    caplog: pytest.LogCaptureFixture,
) -> None:
    emitter = RecordingEmitter()
    backend = FlakyBackend(hang=True)
    gate = make_gate(emitter, backend)
    await approve_one(gate, emitter)

    with caplog.at_level(logging.WARNING, logger="agent_runtime.agent_host.approval"):
        await asyncio.wait_for(gate.aclose(timeout_s=0.05), WAIT_S)

    assert gate.persister is not None
    assert gate.persister.in_flight == 0
    assert gate.persister.abandoned == 1
    assert any("before shutdown" in r.getMessage() for r in caplog.records)


async def test_without_a_backend_decisions_are_only_kept_in_the_records() -> None:
    emitter = RecordingEmitter()
    gate = ApprovalGate(session_id=SESSION_ID, emit=emitter, persist=None, timeout_s=60)
    record = await approve_one(gate, emitter)
    await asyncio.wait_for(gate.aclose(), WAIT_S)
    assert gate.persister is None
    assert gate.records == [record]


async def test_refusals_after_aclose_are_not_posted() -> None:
    emitter, backend = RecordingEmitter(), FlakyBackend()
    gate = make_gate(emitter, backend)
    await asyncio.wait_for(gate.aclose(), WAIT_S)

    late = await asyncio.wait_for(
        gate.request(
            shell_outcome(), capability=Capability.SHELL_EXEC, grant_key="x", task_id="t", step_id="s"
        ),
        WAIT_S,
    )

    assert late.decision is ApprovalDecision.DENIED
    assert gate.persister is not None
    assert gate.persister.in_flight == 0
    assert backend.calls == []
