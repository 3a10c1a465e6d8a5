"""CallRunner: every call from the window runs as a kept task, disables what it affects while it
runs, and hands every failure to the one presenter as a sentence to act on."""

from __future__ import annotations

import asyncio

import pytest

from contracts.errors import ErrorCode, ErrorShape
from contracts.ipc.client_core import ConnectionClosed, RpcCallError
from desktop.conversation.banners import BannerAction
from desktop.conversation.controller import CallRunner, Problem, describe_failure
from desktop.conversation.errors import ConversationError
from desktop.conversation.history_client import BackendUnavailable
from desktop.launch.errors import LaunchError


class Switch:
    def __init__(self) -> None:
        self.enabled = True
        self.changes: list[bool] = []

    def setEnabled(self, enabled: bool) -> None:
        self.enabled = enabled
        self.changes.append(enabled)


class Presenter:
    def __init__(self) -> None:
        self.shown: list[tuple[Problem, object | None]] = []

    def present(self, problem: Problem, context: object | None) -> None:
        self.shown.append((problem, context))


async def test_controls_are_disabled_while_the_call_runs_and_follow_their_condition_after() -> None:
    presenter, send, stop = Presenter(), Switch(), Switch()
    runner = CallRunner(presenter)
    busy = [False]
    runner.guard(stop, lambda: busy[0])
    assert not stop.enabled
    release = asyncio.Event()

    async def work() -> str:
        busy[0] = True
        await release.wait()
        return "sent"

    results: list[str] = []
    task = runner.run("send the message", work(), affects=[send, stop], on_done=results.append)
    await asyncio.sleep(0)
    assert not send.enabled
    assert runner.running == 1
    release.set()
    assert await task == "sent"
    assert results == ["sent"]
    assert send.enabled
    assert stop.enabled, "its condition (busy) now holds"
    busy[0] = False
    runner.refresh()
    assert not stop.enabled
    assert presenter.shown == []


async def test_a_control_two_calls_affect_stays_disabled_until_both_end() -> None:
    runner = CallRunner(Presenter())
    switch = Switch()
    first, second = asyncio.Event(), asyncio.Event()
    a = runner.run("a", first.wait(), affects=[switch])
    b = runner.run("b", second.wait(), affects=[switch])
    first.set()
    await a
    assert not switch.enabled
    second.set()
    await b
    assert switch.enabled


async def test_a_failure_reaches_the_presenter_with_its_context_and_the_on_failed_hook() -> None:
    presenter = Presenter()
    runner = CallRunner(presenter)
    failed: list[BaseException] = []

    async def work() -> None:
        raise ConversationError("A task is still running.", BannerAction.RESUME)

    assert await runner.run("send the message", work(), on_failed=failed.append, context="conv") is None
    [(problem, context)] = presenter.shown
    assert problem == Problem("Could not send the message", "A task is still running.", BannerAction.RESUME)
    assert context == "conv"
    assert isinstance(failed[0], ConversationError)
    await runner.wait_idle()


@pytest.mark.parametrize(
    ("failure", "says", "action"),
    [
        (
            RpcCallError(-32000, "x", ErrorShape(code=ErrorCode.SESSION_NOT_FOUND, message="No session s.")),
            "No session s.",
            None,
        ),
        (
            RpcCallError(-32000, "x", ErrorShape(code=ErrorCode.SESSION_EXPIRED, message="Session ended.")),
            "Continue the conversation in a new session",
            BannerAction.NEW_SESSION,
        ),
        (ConnectionClosed("server closed the connection"), "not connected", BannerAction.RESTART_RUNTIME),
        (TimeoutError(), "No answer came", None),
        (LaunchError("No LLM gateway is configured"), "No LLM gateway", BannerAction.SETTINGS),
        (BackendUnavailable("The backend cannot be reached."), "cannot be reached", None),
        (ValueError("a bug"), "Something unexpected", BannerAction.OPEN_LOGS),
    ],
)
def test_each_failure_is_described_as_what_to_do(failure: BaseException, says: str, action: object) -> None:
    problem = describe_failure("resume the session", failure)
    assert problem.title == "Could not resume the session"
    assert says in problem.message
    assert problem.action == action


async def test_cancel_all_ends_calls_without_presenting_them() -> None:
    presenter = Presenter()
    runner = CallRunner(presenter)
    switch = Switch()
    runner.run("wait", asyncio.Event().wait(), affects=[switch])
    await asyncio.sleep(0)
    await runner.cancel_all()
    assert runner.running == 0
    assert switch.enabled
    assert presenter.shown == []
