"""RunCommand waits without a thread hop where it can: on POSIX the event loop reads the command's
output, and on Linux it sees the exit through a pidfd. What still blocks (Windows pipes, macOS's wait,
stdin) runs on reused threads: no thread start on a command's path, yet no command ever waits behind
another one that is still running."""

from __future__ import annotations

import asyncio
import functools
import os
import sys
import threading
import time

import pytest

from agent_runtime.tool_runtime import LocalToolRouter
from agent_runtime.tool_runtime.tools.shell.process import in_thread
from tests.agent_runtime.tool_runtime.support import call, ok


def _command_threads() -> set[str]:
    return {thread.name for thread in threading.enumerate() if thread.name.startswith("cowork-")}


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="Linux: the loop watches a pidfd for the exit")
async def test_commands_run_without_a_thread(router: LocalToolRouter) -> None:
    before = _command_threads()
    for step in range(5):
        text = ok(await router.execute(call("RunCommand", command=f"sleep 0.0{step}; echo step-{step}")))
        assert f"\nstep-{step}\n" in text
    assert _command_threads() <= before, "a command handed its output or its exit to a thread"


@pytest.mark.skipif(sys.platform == "win32", reason="Windows pipes are read by threads")
async def test_a_command_whose_output_outlives_it_is_read_to_the_end(router: LocalToolRouter) -> None:
    # The shell exits at once; its background child writes on, holding the pipe, then closes it.
    text = ok(await router.execute(call("RunCommand", command="(sleep 0.2; echo later) & echo now")))
    assert "\nnow\n" in text
    assert "later" in text


async def test_a_long_command_does_not_hold_up_a_short_one(router: LocalToolRouter) -> None:
    long_running = asyncio.ensure_future(router.execute(call("RunCommand", command="sleep 3; echo late")))
    await asyncio.sleep(0.2)
    started = time.monotonic()
    assert "\nquick\n" in ok(await router.execute(call("RunCommand", command="echo quick")))
    assert time.monotonic() - started < 2.0
    assert "\nlate\n" in ok(await long_running)


async def test_many_blocking_calls_at_once_each_get_a_thread() -> None:
    loop = asyncio.get_running_loop()
    gate = threading.Barrier(12, timeout=10)

    def meet(number: int) -> int:
        gate.wait()
        return number

    # Twelve calls that only finish once all twelve run at the same time: any queueing deadlocks.
    results = await asyncio.gather(
        *(in_thread(loop, functools.partial(meet, n), "cowork-test") for n in range(12))
    )
    assert results == list(range(12))


async def test_an_exception_in_the_call_arrives_on_the_future() -> None:
    def fail() -> None:
        raise OSError("pipe gone")

    loop = asyncio.get_running_loop()
    with pytest.raises(OSError, match="pipe gone"):
        await in_thread(loop, fail, "cowork-test")
    # The thread survived the error and takes the next call.
    assert await in_thread(loop, lambda: 7, "cowork-test") == 7
