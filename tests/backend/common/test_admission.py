"""Requests start in arrival order, a few per event-loop turn, and waiting for a turn never blocks the
server (backend.common.admission)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest
from starlette.types import Message, Receive, Scope, Send

from backend.common.admission import PER_TURN, FairAdmission

Handler = Callable[[int], Awaitable[None]]


class _Turns:
    """Counts event-loop turns: one step per turn, as long as it runs."""

    def __init__(self) -> None:
        self.count = 0
        self._task = asyncio.create_task(self._tick())

    async def _tick(self) -> None:
        while True:
            self.count += 1
            await asyncio.sleep(0)

    def stop(self) -> None:
        self._task.cancel()


def _gate(handler: Handler, per_turn: int = PER_TURN) -> FairAdmission:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await handler(scope["index"])

    return FairAdmission(app, per_turn)


async def _call(gate: FairAdmission, index: int, kind: str = "http") -> None:
    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        return None

    await gate({"type": kind, "index": index}, receive, send)


async def test_an_idle_server_starts_a_request_at_once() -> None:
    started: list[int] = []

    async def handler(index: int) -> None:
        started.append(index)

    gate = _gate(handler)
    call = asyncio.ensure_future(_call(gate, 0))
    # One pass of the loop runs the request's first step; it must get through the gate in it.
    await asyncio.sleep(0)
    assert started == [0]
    await call


async def test_a_burst_starts_in_arrival_order_a_few_per_loop_turn() -> None:
    turns = _Turns()
    started: list[tuple[int, int]] = []

    async def handler(index: int) -> None:
        started.append((index, turns.count))

    gate = _gate(handler, per_turn=3)
    await asyncio.gather(*(_call(gate, index) for index in range(20)))
    turns.stop()
    assert [index for index, _ in started] == list(range(20))
    per_turn: dict[int, int] = {}
    for _, turn in started:
        per_turn[turn] = per_turn.get(turn, 0) + 1
    assert max(per_turn.values()) <= 3
    assert len(per_turn) >= 7


async def test_later_arrivals_queue_behind_earlier_ones() -> None:
    started: list[int] = []

    async def handler(index: int) -> None:
        started.append(index)

    gate = _gate(handler, per_turn=1)
    first = [asyncio.ensure_future(_call(gate, index)) for index in range(5)]
    await asyncio.sleep(0)
    late = [asyncio.ensure_future(_call(gate, index)) for index in range(5, 8)]
    await asyncio.gather(*first, *late)
    assert started == list(range(8))


async def test_a_request_that_waits_does_not_hold_back_the_others() -> None:
    released = asyncio.Event()
    finished: list[int] = []

    async def handler(index: int) -> None:
        if index == 0:
            # Like a request waiting for a worker thread or the rest of its body.
            await released.wait()
        if index == 9:
            released.set()
        finished.append(index)

    gate = _gate(handler, per_turn=1)
    async with asyncio.timeout(10):
        await asyncio.gather(*(_call(gate, index) for index in range(10)))
    assert finished[-1] == 0
    assert sorted(finished) == list(range(10))


async def test_a_cancelled_waiting_request_gives_up_its_place() -> None:
    started: list[int] = []

    async def handler(index: int) -> None:
        started.append(index)

    gate = _gate(handler, per_turn=1)
    calls = [asyncio.ensure_future(_call(gate, index)) for index in range(6)]
    await asyncio.sleep(0)
    calls[3].cancel()
    results = await asyncio.gather(*calls, return_exceptions=True)
    assert isinstance(results[3], asyncio.CancelledError)
    assert started == [0, 1, 2, 4, 5]


async def test_other_connections_than_http_requests_are_not_queued() -> None:
    started: list[int] = []
    hold = asyncio.Event()

    async def handler(index: int) -> None:
        started.append(index)
        if index < 3:
            await hold.wait()

    gate = _gate(handler, per_turn=1)
    waiting = [asyncio.ensure_future(_call(gate, index)) for index in range(3)]
    await asyncio.sleep(0)
    lifespan = asyncio.ensure_future(_call(gate, 99, kind="lifespan"))
    await asyncio.sleep(0)
    assert 99 in started
    hold.set()
    await asyncio.gather(*waiting, lifespan)


def test_at_least_one_request_per_turn_is_required() -> None:
    with pytest.raises(ValueError, match="per_turn"):
        FairAdmission(_gate(lambda index: asyncio.sleep(0)), per_turn=0)
