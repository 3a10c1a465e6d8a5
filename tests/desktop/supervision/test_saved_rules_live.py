"""The desktop sends the project's saved rules with StartTask: a real runtime, the local backend and the
scripted gateway; the write the "always" approval mode would ask about is answered by the rule."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_runtime.scripted_gateway import ScriptedGatewayThread
from desktop.approval.queue import ApprovalQueue
from tests.desktop.supervision.live import tool_call
from tests.desktop.supervision.test_runtime_process import open_session
from tests.desktop.support import Run
from tests.support.backend import Backend


def test_a_saved_rule_of_the_project_answers_the_approval_the_mode_would_ask(
    run: Run[None], backend: Backend, workspace: Path, tmp_path: Path
) -> None:
    script = [
        tool_call("WriteFile", "c1", path=str(workspace / "notes.md"), content="# Notes\n"),
        {"text": "Written."},
    ]
    asked_for: list[str] = []

    def rules_for(folder: str) -> list[dict[str, Any]]:
        asked_for.append(folder)
        return [{"kind": "path", "pattern": "*.md"}]

    async def scenario() -> None:
        approvals = ApprovalQueue()
        with ScriptedGatewayThread({"turns": script}) as gateway:
            session, waiter = open_session(
                backend,
                gateway.url,
                tmp_path,
                workspace,
                approvals,
                approval_mode="always",
                rules_for=rules_for,
            )
            await session.send("Write the notes")
            await waiter.until(lambda: session.state.status.task == "TASK_COMPLETED", what="the task's end")
            await session.close()
        assert len(approvals) == 0  # nobody was asked
        assert asked_for == [str(workspace)]
        assert (workspace / "notes.md").read_text() == "# Notes\n"

    run(scenario())
