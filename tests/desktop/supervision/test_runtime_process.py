"""The window's runtime processes, for real: ``QtRuntimeLauncher`` starts ``python -m agent_runtime``
with ``QProcess``, a :class:`ConversationSession` speaks to it, the local backend and the scripted
gateway answer. Approvals, the patch preview, Shutdown, a runtime killed mid-task and resumed."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any

import psutil

from agent_runtime.scripted_gateway import ScriptedGatewayThread
from desktop.approval.queue import ApprovalQueue
from desktop.conversation.items import AssistantMessage, Notice, ToolCallRow, ToolState
from desktop.conversation.session import ConversationSession, Phase, TaskDefaults
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


def open_session(
    backend: Backend,
    gateway_url: str,
    tmp_path: Path,
    folder: Path | None,
    approvals: ApprovalQueue,
    **defaults: Any,
) -> tuple[ConversationSession, StateWaiter]:
    env = runtime_env(backend, gateway_url, tmp_path / "runtime-data")
    state = ConversationState()
    session = ConversationSession(
        state=state,
        launcher=launcher(env, tmp_path / "logs"),
        identity=identity(backend),
        folder=str(folder) if folder else None,
        approvals=approvals,
        defaults=lambda: TaskDefaults(**defaults),
    )
    return session, StateWaiter(state)


def test_a_task_streams_asks_for_approval_writes_and_previews_its_change(
    run: Run[None], backend: Backend, workspace: Path, tmp_path: Path
) -> None:
    script = [
        {
            "text": "I will write the notes file.",
            "chunkSize": 4,
            **tool_call("WriteFile", "c1", path=str(workspace / "notes.md"), content="# Notes\n"),
        },
        {"text": "Done: **notes.md** is written.", "chunkSize": 3},
    ]

    async def scenario() -> None:
        approvals = ApprovalQueue()
        with ScriptedGatewayThread({"turns": script}) as gateway:
            session, waiter = open_session(
                backend, gateway.url, tmp_path, workspace, approvals, approval_mode="always"
            )
            await session.send("Write the notes")
            assert session.phase is Phase.READY
            pending = await waiter.until(approvals.head, what="an approval request")
            assert pending.session_id == session.session_id
            row = next(i for i in session.state.items if isinstance(i, ToolCallRow))
            assert row.state is ToolState.AWAITING_APPROVAL
            assert session.state.status.task == "WAITING_FOR_APPROVAL"
            await session.approve(pending.approval_id, "approved", "once", "")
            await waiter.until(lambda: session.state.status.task == "TASK_COMPLETED", what="the task's end")
            preview = await session.patch_preview()
            pid = session.runtime_pid
            await session.close()
        assert (workspace / "notes.md").read_text() == "# Notes\n"
        replies = [i.text for i in session.state.items if isinstance(i, AssistantMessage)]
        assert replies == ["I will write the notes file.", "Done: **notes.md** is written."]
        assert row.state is ToolState.SUCCEEDED
        assert row.target == str(workspace / "notes.md")
        assert row.duration_ms is not None
        assert any(isinstance(i, Notice) and i.action == "review_changes" for i in session.state.items)
        assert len(approvals) == 0
        assert session.state.tokens_used
        assert session.state.token_limit
        [changed] = preview["files"]
        assert changed["status"] == "created"
        assert "+# Notes" in changed["diff"]
        assert pid is not None
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE

    run(scenario())


def test_a_runtime_killed_mid_task_is_replaced_and_the_task_resumes_from_its_checkpoint(
    run: Run[None], backend: Backend, workspace: Path, tmp_path: Path
) -> None:
    started, go = tmp_path / "started", tmp_path / "go"
    script = [tool_call("RunCommand", "c1", command=held_command(started, go)), {"text": "Carried on."}]

    async def scenario() -> None:
        with ScriptedGatewayThread({"turns": script}) as gateway:
            approvals = ApprovalQueue()
            session, waiter = open_session(backend, gateway.url, tmp_path, workspace, approvals)
            lost: list[str] = []
            recovering: list[asyncio.Future[None]] = []

            def recover(s: ConversationSession, why: str) -> None:
                lost.append(why)
                recovering.append(asyncio.ensure_future(s.recover()))

            session.on_lost = recover
            await session.send("Run the long command")
            pending = await waiter.until(approvals.head, what="the approval request")
            await session.approve(pending.approval_id, "approved", "once", "")
            await waiter.until(started.exists, what="the command to start")
            first = session.runtime_pid
            assert first is not None
            os.kill(first, signal.SIGKILL)
            await waiter.until(lambda: lost, what="the runtime's loss")
            go.touch()
            await waiter.until(
                lambda: session.state.status.task == "TASK_COMPLETED", timeout=30, what="the end"
            )
            second = session.runtime_pid
            await session.close()
        assert second not in (None, first)
        assert "killed" in lost[0]
        texts = [i.text for i in session.state.items if isinstance(i, Notice)]
        assert any("resumed" in text for text in texts), texts
        assert [i.text for i in session.state.items if isinstance(i, AssistantMessage)] == ["Carried on."]
        assert session.state.banner is None

    run(scenario())
