"""A conversation interrupted mid-command (the desktop gone, its runtime with it) and resumed at the
next start shows what a later restart of the app shows: the interrupted turn's prompt, its reply, the
command's row with its target and outcome — not a lone result row under the previous answer. Real
runtimes, the real local backend, the scripted gateway."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

from agent_runtime.scripted_gateway import ScriptedGatewayThread
from desktop.approval.queue import ApprovalQueue
from desktop.conversation.history_client import HistoryClient
from desktop.conversation.items import AssistantMessage, Item, Notice, ToolCallRow, UserMessage
from desktop.conversation.journal import OpenSession
from desktop.conversation.session import ConversationSession
from desktop.conversation.state import ConversationState
from tests.desktop.supervision.live import (
    StateWaiter,
    held_command,
    identity,
    launcher,
    runtime_env,
    tool_call,
)
from tests.desktop.support import Run
from tests.support.backend import Backend


def view(items: list[Item]) -> list[tuple[Any, ...]]:
    """What the user reads of each item."""
    shown: list[tuple[Any, ...]] = []
    for item in items:
        if isinstance(item, UserMessage):
            shown.append(("you", item.text))
        elif isinstance(item, AssistantMessage):
            shown.append(("assistant", item.text))
        elif isinstance(item, ToolCallRow):
            shown.append(("tool", item.tool_name, item.target, item.state.value, item.output))
        elif isinstance(item, Notice):
            shown.append(("notice", item.text))
    return shown


def test_the_view_after_resuming_an_interrupted_turn_equals_the_view_after_a_restart(
    run: Run[None], backend: Backend, workspace: Path, tmp_path: Path
) -> None:
    started, go = tmp_path / "started", tmp_path / "go"
    command = held_command(started, go)
    script = [
        {"text": "Here is the answer."},
        {"text": "I will run the job.", **tool_call("RunCommand", "r1", command=command)},
        {"text": "Picked up where it stopped."},
    ]

    async def scenario() -> None:
        history = HistoryClient(backend.url, backend.token)

        async def fetch(workspace_id: str, session_id: str) -> dict[str, Any] | None:
            found = await history.history(workspace_id, session_id)
            return None if found is None else found.to_wire()

        env = runtime_env(backend, "", tmp_path / "runtime-data")
        with ScriptedGatewayThread({"turns": script}) as gateway:
            env["LLM_GATEWAY_ENDPOINT"] = gateway.url

            approvals = ApprovalQueue()

            def session(state: ConversationState, interrupted: OpenSession | None) -> ConversationSession:
                return ConversationSession(
                    state=state,
                    launcher=launcher(env, tmp_path / "logs"),
                    identity=identity(backend),
                    folder=str(workspace),
                    approvals=approvals,
                    fetch_history=fetch,
                    interrupted=interrupted,
                )

            # The first window: one task done, the next one interrupted while its command runs.
            first = session(ConversationState(), None)
            first.on_lost = lambda _session, _why: None  # the window is gone: nobody recovers
            waiter = StateWaiter(first.state)
            await first.send("What is the answer?")
            await waiter.until(lambda: first.state.status.task == "TASK_COMPLETED", what="the first task")
            await first.send("Run the job")
            asked = await waiter.until(approvals.head, what="the approval request")
            await first.approve(asked.approval_id, "approved", "once", "")
            await waiter.until(started.exists, what="the command to start")
            assert first.runtime_pid is not None
            assert first.session_id
            assert first.workspace_id
            os.kill(first.runtime_pid, signal.SIGKILL)
            go.touch()
            # The next start: the conversation as its stored history has it, then Resume.
            state = ConversationState()
            stored = await fetch(first.workspace_id, first.session_id)
            assert stored is not None
            state.load_history(stored["messages"])
            resumed = session(state, OpenSession(first.session_id, first.workspace_id, str(workspace), 0))
            waiter = StateWaiter(state)
            try:
                await resumed.resume()
                await waiter.until(
                    lambda: (
                        state.status.task == "TASK_COMPLETED" and ("you", "Run the job") in view(state.items)
                    ),
                    timeout=30,
                    what="the resumed task's end, drawn whole",
                )
                # A restart of the app now: the conversation drawn from its stored history.
                restarted = ConversationState()
                later = await fetch(first.workspace_id, first.session_id)
                assert later is not None
                restarted.load_history(later["messages"])
            finally:
                await resumed.close()
                await history.aclose()
        assert view(state.items) == view(restarted.items)
        rows = [item for item in view(state.items) if item[0] == "tool"]
        assert rows == [("tool", "RunCommand", command, "failed", rows[0][4])], "one row, with its target"
        assert view(state.items)[-1] == ("assistant", "Picked up where it stopped.")

    run(scenario())
