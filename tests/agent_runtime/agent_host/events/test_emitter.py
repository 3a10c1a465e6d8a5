"""The event emitter delivers every event, in order, to the desktop and the local log — and nothing
it meets (a slow, failing or absent desktop, a full disk, a bad payload) reaches the agent loop
(seed 000 §12)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import stat
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from agent_runtime.agent_host.events import EventEmitter, Notify
from agent_runtime.agent_host.events import emitter as emitter_module
from agent_runtime.agent_host.session.rpc import Dispatcher, RpcConnection
from contracts.approvals import ApprovalDetails, ApprovalRequest
from contracts.enums import RiskLevel, ToolStatus
from contracts.events import EventType, SessionEvent, StepPayload, TextChunkPayload, ToolCompletedPayload

BOUND_S = 5.0
NOW = datetime(2026, 2, 21, 15, 9, tzinfo=UTC)


class Desktop:
    """A fake desktop sink: records what arrives; can be held (backpressure) or made to fail."""

    def __init__(self, *, fail_every: int = 0) -> None:
        self.received: list[dict[str, Any]] = []
        self.methods: set[str] = set()
        self.gate = asyncio.Event()
        self.gate.set()
        self.calls = 0
        self.fail_every = fail_every

    async def notify(self, method: str, params: Any) -> None:
        self.calls += 1
        await self.gate.wait()
        if self.fail_every and self.calls % self.fail_every == 0:
            raise ConnectionResetError("desktop went away")
        self.methods.add(method)
        self.received.append(params)

    def texts(self) -> list[str]:
        return [event["payload"]["text"] for event in self.received]


def make_emitter(
    tmp_path: Path, notify: Notify | None, *, clock: Callable[[], datetime] | None = None
) -> EventEmitter:
    return EventEmitter(
        workspace_id="ws_456",
        session_id="sess_789",
        notify=notify,
        log_path=tmp_path / "logs" / "sess_789.events.jsonl",
        clock=clock or (lambda: NOW),
    )


def log_lines(emitter: EventEmitter) -> list[dict[str, Any]]:
    assert emitter.log_path is not None
    if not emitter.log_path.exists():
        return []
    return [json.loads(line) for line in emitter.log_path.read_text(encoding="utf-8").splitlines()]


async def until(condition: Callable[[], bool]) -> None:
    """Let the loop run (bounded) until ``condition`` holds.

    Yields to the loop rather than sleeping: the emitter's tasks make progress on each turn, and some
    conditions (lines in the log file) have no event to wait on.
    """
    async with asyncio.timeout(BOUND_S):
        while not condition():  # noqa: ASYNC110 - polls a file/counter, bounded by the timeout
            await asyncio.sleep(0)


def emit_texts(emitter: EventEmitter, count: int, *, start: int = 0) -> None:
    for index in range(start, start + count):
        emitter.emit(EventType.TEXT_CHUNK, {"text": f"chunk {index}"}, task_id="task_001", step_id="step_001")


# ---------------------------------------------------------------- the wire dict and the log


async def test_every_event_carries_the_full_id_chain_and_its_checked_payload(tmp_path: Path) -> None:
    desktop = Desktop()
    emitter = make_emitter(tmp_path, desktop.notify)
    emitter.emit(EventType.SESSION_STARTED, {"executionEnvironment": "desktop"})
    emitter.emit(
        EventType.TOOL_COMPLETED,
        ToolCompletedPayload(tool_name="ReadFile", status=ToolStatus.SUCCEEDED, latency_ms=12),
        task_id="task_001",
        step_id="step_003",
    )
    await emitter.drain()
    assert desktop.methods == {"SessionEvent"}
    started, completed = desktop.received
    assert started == {
        "eventId": started["eventId"],
        "eventType": "session_started",
        "timestamp": "2026-02-21T15:09:00Z",
        "workspaceId": "ws_456",
        "sessionId": "sess_789",
        "payload": {"executionEnvironment": "desktop"},
    }
    assert completed["taskId"] == "task_001"
    assert completed["stepId"] == "step_003"
    assert completed["payload"] == {"toolName": "ReadFile", "status": "succeeded", "latencyMs": 12}
    for event in desktop.received:
        assert SessionEvent.model_validate_json(json.dumps(event)).to_wire() == event
    await emitter.aclose()


async def test_log_lines_are_the_wire_events_plus_the_component(tmp_path: Path) -> None:
    desktop = Desktop()
    emitter = make_emitter(tmp_path, desktop.notify)
    emitter.emit(EventType.TASK_STARTED, {"maxSteps": 40, "approvalMode": "on_risky_actions"}, task_id="t1")
    emitter.emit(EventType.STEP_STARTED, StepPayload(step_id="s1", step_count=1), task_id="t1", step_id="s1")
    emitter.emit(EventType.TEXT_CHUNK, {"text": 'héllo ✓\n"quoted"'}, task_id="t1", step_id="s1")
    await emitter.aclose()
    lines = log_lines(emitter)
    assert [line.pop("component") for line in lines] == ["LocalAgentHost"] * 3
    assert lines == desktop.received
    assert lines[2]["payload"]["text"] == 'héllo ✓\n"quoted"'
    assert len({line["eventId"] for line in lines}) == 3
    for line in lines:
        SessionEvent.model_validate_json(json.dumps(line))
        assert (line["workspaceId"], line["sessionId"], line["taskId"]) == ("ws_456", "sess_789", "t1")


async def test_a_wire_model_payload_is_sent_in_its_wire_form(tmp_path: Path) -> None:
    desktop = Desktop()
    emitter = make_emitter(tmp_path, desktop.notify)
    request = ApprovalRequest(
        approval_id="appr_001",
        session_id="sess_789",
        task_id="task_001",
        step_id="step_003",
        title="Local command execution",
        action_summary="Run: pytest tests/ --verbose",
        risk_level=RiskLevel.MEDIUM,
        details=ApprovalDetails(tool_name="RunCommand", command="pytest tests/ --verbose", cwd="/p"),
    )
    emitter.emit(EventType.APPROVAL_REQUESTED, request, task_id="task_001", step_id="step_003")
    emitter.emit(EventType.POLICY_EXPIRED, {"expiresAt": NOW})  # a datetime in a mapping is fine too
    await emitter.aclose()
    assert desktop.received[0]["payload"] == request.to_wire()
    assert desktop.received[0]["payload"]["riskLevel"] == "medium"
    assert desktop.received[1]["payload"] == {"expiresAt": "2026-02-21T15:09:00Z"}


async def test_timestamps_are_utc_from_the_injected_clock(tmp_path: Path) -> None:
    moments = iter(
        [datetime(2026, 2, 21, 16, 9, 30, 250_000, tzinfo=timezone(timedelta(hours=1))), NOW + timedelta(1)]
    )
    desktop = Desktop()
    emitter = make_emitter(tmp_path, desktop.notify, clock=lambda: next(moments))
    emitter.emit(EventType.POLICY_EXPIRED)
    emitter.emit(EventType.POLICY_EXPIRED)
    await emitter.aclose()
    assert [event["timestamp"] for event in desktop.received] == [
        "2026-02-21T15:09:30.250000Z",
        "2026-02-22T15:09:00Z",
    ]


@pytest.mark.skipif(os.name == "nt", reason="POSIX permission bits")
async def test_the_log_is_owner_only_and_appended_to_across_restarts(tmp_path: Path) -> None:
    old_umask = os.umask(0o000)
    try:
        for run in range(2):
            emitter = make_emitter(tmp_path, None)
            emit_texts(emitter, 3, start=run * 3)
            await emitter.aclose()
    finally:
        os.umask(old_umask)
    assert emitter.log_path is not None
    assert stat.S_IMODE(emitter.log_path.stat().st_mode) == 0o600
    assert stat.S_IMODE(emitter.log_path.parent.stat().st_mode) == 0o700
    assert [line["payload"]["text"] for line in log_lines(emitter)] == [f"chunk {i}" for i in range(6)]


# ---------------------------------------------------------------- order and backpressure


async def test_emit_never_waits_for_a_slow_desktop_and_order_is_kept(tmp_path: Path) -> None:
    desktop = Desktop()
    desktop.gate.clear()  # the desktop is not reading
    emitter = make_emitter(tmp_path, desktop.notify)
    emit_texts(emitter, 500)  # returns at once: nothing here awaits
    assert emitter.emitted == 500
    await until(lambda: len(log_lines(emitter)) == 500)  # the log does not wait for the desktop
    assert desktop.received == []
    desktop.gate.set()
    async with asyncio.timeout(BOUND_S):
        await emitter.drain()
    assert desktop.texts() == [f"chunk {i}" for i in range(500)]
    assert [line["payload"]["text"] for line in log_lines(emitter)] == desktop.texts()
    await emitter.aclose()


async def test_drain_waits_for_delivery_of_everything_emitted_before_it(tmp_path: Path) -> None:
    desktop = Desktop()
    desktop.gate.clear()
    emitter = make_emitter(tmp_path, desktop.notify)
    emit_texts(emitter, 3)
    drained = asyncio.create_task(emitter.drain())
    await until(lambda: desktop.calls == 1)
    assert not drained.done()
    desktop.gate.set()
    async with asyncio.timeout(BOUND_S):
        await drained
    assert len(desktop.received) == 3
    await emitter.aclose()


async def test_a_desktop_that_never_reads_loses_the_oldest_events_not_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(emitter_module, "MAX_PENDING_NOTIFICATIONS", 5)
    desktop = Desktop()
    desktop.gate.clear()
    emitter = make_emitter(tmp_path, desktop.notify)
    emit_texts(emitter, 1)
    await until(lambda: desktop.calls == 1)  # chunk 0 is in flight, held by the desktop
    emit_texts(emitter, 19, start=1)
    desktop.gate.set()
    async with asyncio.timeout(BOUND_S):
        await emitter.drain()
    assert desktop.texts() == ["chunk 0", *(f"chunk {i}" for i in range(15, 20))]
    assert emitter.dropped_undelivered == 14
    assert len(log_lines(emitter)) == 20  # the log keeps every event
    await emitter.aclose()


async def test_events_flow_over_a_real_connection_that_applies_backpressure(tmp_path: Path) -> None:
    ours, theirs = socket.socketpair()
    reader, writer = await asyncio.open_connection(sock=ours)
    peer_reader, peer_writer = await asyncio.open_connection(sock=theirs, limit=2**20)
    connection = RpcConnection(reader, writer, Dispatcher())
    emitter = make_emitter(tmp_path, connection.notify)
    chunk = "x" * 4000
    for index in range(1_000):  # ~4 MB: far past the socket buffers and the write high-water mark
        emitter.emit(EventType.TEXT_CHUNK, {"text": f"{index}:{chunk}"}, task_id="t", step_id="s")
    await until(lambda: len(log_lines(emitter)) == 1_000)
    frames: list[dict[str, Any]] = []
    async with asyncio.timeout(BOUND_S * 4):
        while len(frames) < 1_000:
            frames.append(json.loads(await peer_reader.readline()))
        await emitter.drain()
    assert {frame["method"] for frame in frames} == {"SessionEvent"}
    assert [int(frame["params"]["payload"]["text"].split(":")[0]) for frame in frames] == list(range(1_000))
    await emitter.aclose()
    writer.close()
    peer_writer.close()
    await asyncio.gather(writer.wait_closed(), peer_writer.wait_closed(), return_exceptions=True)


# ---------------------------------------------------------------- failing and absent sinks


async def test_a_failing_desktop_stops_neither_the_log_nor_later_deliveries(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    desktop = Desktop(fail_every=2)
    emitter = make_emitter(tmp_path, desktop.notify)
    with caplog.at_level(logging.WARNING, logger=emitter_module.__name__):
        emit_texts(emitter, 10)
        async with asyncio.timeout(BOUND_S):
            await emitter.drain()
    assert desktop.texts() == [f"chunk {i}" for i in range(0, 10, 2)]
    assert emitter.notify_failures == 5
    assert len(log_lines(emitter)) == 10
    assert caplog.records, "the first failure is logged"
    await emitter.aclose()


async def test_without_a_desktop_events_are_still_logged(tmp_path: Path) -> None:
    emitter = make_emitter(tmp_path, None)
    emit_texts(emitter, 4)
    async with asyncio.timeout(BOUND_S):
        await emitter.drain()
    assert len(log_lines(emitter)) == 4
    await emitter.aclose()


async def test_without_a_log_events_still_reach_the_desktop(tmp_path: Path) -> None:
    desktop = Desktop()
    emitter = EventEmitter(workspace_id="ws", session_id="s", notify=desktop.notify, log_path=None)
    emit_texts(emitter, 3)
    await emitter.drain()
    assert desktop.texts() == ["chunk 0", "chunk 1", "chunk 2"]
    await emitter.aclose()


async def test_attaching_a_desktop_delivers_the_events_that_follow(tmp_path: Path) -> None:
    first, second = Desktop(), Desktop()
    emitter = make_emitter(tmp_path, None)
    emit_texts(emitter, 2)
    await emitter.drain()
    emitter.attach(first.notify)
    emit_texts(emitter, 2, start=2)
    await emitter.drain()
    first.gate.clear()
    emit_texts(emitter, 2, start=4)
    await until(lambda: first.calls == 3)  # chunk 4 is stuck with a desktop that went away
    emitter.attach(second.notify)  # the desktop reconnected
    first.gate.set()
    await emitter.drain()
    assert first.texts() == ["chunk 2", "chunk 3", "chunk 4"]
    assert second.texts() == ["chunk 5"]
    assert len(log_lines(emitter)) == 6
    await emitter.aclose()


async def test_a_log_that_cannot_be_written_is_reported_once_and_the_desktop_still_served(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "logs").write_text("a file where the log directory should be")
    desktop = Desktop()
    emitter = make_emitter(tmp_path, desktop.notify)
    with caplog.at_level(logging.ERROR):
        for batch in range(3):
            emit_texts(emitter, 2, start=batch * 2)
            async with asyncio.timeout(BOUND_S):
                await emitter.drain()
    assert len(desktop.received) == 6
    assert len([r for r in caplog.records if r.levelno >= logging.ERROR]) == 1
    await emitter.aclose()


# ---------------------------------------------------------------- programming errors never raise


BAD_EVENTS: dict[str, tuple[Any, Any, dict[str, Any]]] = {
    "wrong payload type": (EventType.TEXT_CHUNK, {"text": 5}, {}),
    "missing field": (EventType.TOOL_REQUESTED, {}, {}),
    "unknown field": (EventType.TEXT_CHUNK, {"text": "a", "colour": "red"}, {}),
    "another type's model": (EventType.TEXT_CHUNK, StepPayload(step_id="s1"), {}),
    "unknown event type": ("made_up_event", {}, {}),
    "enum value not on the list": (EventType.TOOL_REQUESTED, {"toolName": "X", "capability": "Root.All"}, {}),
    "a task id that is not text": (EventType.TEXT_CHUNK, {"text": "a"}, {"task_id": 7}),
    "an empty step id": (EventType.TEXT_CHUNK, {"text": "a"}, {"step_id": ""}),
    "not JSON": (EventType.TEXT_CHUNK, {"text": object()}, {}),
}


@pytest.mark.parametrize(("event_type", "payload", "ids"), BAD_EVENTS.values(), ids=BAD_EVENTS.keys())
async def test_an_event_that_breaks_its_contract_is_dropped_and_logged_not_raised(
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    event_type: Any,
    payload: Any,
    ids: dict[str, Any],
) -> None:
    desktop = Desktop()
    emitter = make_emitter(tmp_path, desktop.notify)
    with caplog.at_level(logging.ERROR, logger=emitter_module.__name__):
        emitter.emit(event_type, payload, **ids)
    assert [r.levelno for r in caplog.records] == [logging.ERROR]
    emitter.emit(EventType.TEXT_CHUNK, TextChunkPayload(text="after"))
    await emitter.aclose()
    assert desktop.texts() == ["after"]
    assert emitter.dropped_invalid == 1
    assert [line["payload"]["text"] for line in log_lines(emitter)] == ["after"]


async def test_a_repeated_contract_break_is_logged_at_error_level_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    emitter = make_emitter(tmp_path, None)
    with caplog.at_level(logging.ERROR, logger=emitter_module.__name__):
        for _ in range(50):
            emitter.emit(EventType.TEXT_CHUNK, {"text": None})
    assert len(caplog.records) == 1
    assert emitter.dropped_invalid == 50
    await emitter.aclose()


def test_emitting_outside_an_event_loop_drops_the_event_without_raising(tmp_path: Path) -> None:
    emitter = make_emitter(tmp_path, None)
    emitter.emit(EventType.TEXT_CHUNK, {"text": "nobody is running"})
    assert emitter.dropped_invalid == 1
    assert emitter.emitted == 0


# ---------------------------------------------------------------- closing is bounded


async def test_aclose_gives_up_on_a_stuck_desktop_within_its_bound_and_keeps_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(emitter_module, "CLOSE_TIMEOUT_S", 0.2)
    desktop = Desktop()
    desktop.gate.clear()  # never opens
    emitter = make_emitter(tmp_path, desktop.notify)
    emit_texts(emitter, 5)
    async with asyncio.timeout(BOUND_S):
        await emitter.aclose()
    assert desktop.received == []
    assert len(log_lines(emitter)) == 5
    assert emitter.closed


async def test_aclose_releases_a_drain_that_was_waiting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(emitter_module, "CLOSE_TIMEOUT_S", 0.1)
    desktop = Desktop()
    desktop.gate.clear()
    emitter = make_emitter(tmp_path, desktop.notify)
    emit_texts(emitter, 2)
    drained = asyncio.create_task(emitter.drain())
    async with asyncio.timeout(BOUND_S):
        await emitter.aclose()
        await drained


async def test_after_aclose_emit_is_a_quiet_no_op(tmp_path: Path) -> None:
    desktop = Desktop()
    emitter = make_emitter(tmp_path, desktop.notify)
    emit_texts(emitter, 1)
    await emitter.aclose()
    emitter.emit(EventType.TEXT_CHUNK, {"text": "too late"})
    await emitter.drain()
    await emitter.aclose()
    assert desktop.texts() == ["chunk 0"]
    assert len(log_lines(emitter)) == 1


async def test_closing_an_emitter_that_never_emitted_is_immediate(tmp_path: Path) -> None:
    emitter = make_emitter(tmp_path, None)
    async with asyncio.timeout(BOUND_S):
        await emitter.aclose()
    assert emitter.log_path is not None
    assert not emitter.log_path.exists()


def test_an_emitter_needs_the_id_chain() -> None:
    with pytest.raises(ValueError, match="workspace ID"):
        EventEmitter(workspace_id="", session_id="s", notify=None, log_path=None)


async def test_a_desktop_sink_that_raises_cancelled_does_not_stop_delivery(tmp_path: Path) -> None:
    received: list[str] = []

    async def notify(method: str, params: Any) -> None:
        text = params["payload"]["text"]
        if text == "chunk 1":
            raise asyncio.CancelledError  # e.g. a connection torn down under the write
        received.append(text)

    emitter = make_emitter(tmp_path, notify)
    emit_texts(emitter, 3)
    async with asyncio.timeout(BOUND_S):
        await emitter.drain()
    assert received == ["chunk 0", "chunk 2"]
    assert emitter.notify_failures == 1
    await emitter.aclose()
