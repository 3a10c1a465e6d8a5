"""Eager start: a coroutine runs now, and only what has to wait becomes a task."""

from __future__ import annotations

import asyncio

import pytest

from agent_runtime.agent_host.session.rpc.eager import start_eagerly


async def test_a_coroutine_that_never_waits_finishes_inline_without_a_task() -> None:
    ran: list[str] = []

    async def quick() -> None:
        ran.append("done")

    assert start_eagerly(quick()) is None
    assert ran == ["done"]


async def test_a_coroutine_that_waits_continues_as_a_task_from_where_it_stopped() -> None:
    steps: list[str] = []
    gate: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    async def slow() -> None:
        steps.append("before")
        steps.append(await gate)
        await asyncio.sleep(0)
        steps.append("after")

    task = start_eagerly(slow())
    assert task is not None
    assert steps == ["before"]  # the first part ran before start_eagerly returned
    gate.set_result("gate opened")
    await asyncio.wait_for(task, 5)
    assert steps == ["before", "gate opened", "after"]


async def test_cancelling_the_continuation_cancels_the_coroutine_where_it_waits() -> None:
    cleaned_up = asyncio.Event()

    async def waits_forever() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            cleaned_up.set()

    task = start_eagerly(waits_forever())
    assert task is not None
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cleaned_up.is_set()


async def test_an_exception_after_the_first_wait_reaches_the_task() -> None:
    async def fails_later() -> None:
        await asyncio.sleep(0)
        raise LookupError("late failure")

    task = start_eagerly(fails_later())
    assert task is not None
    with pytest.raises(LookupError, match="late failure"):
        await task
