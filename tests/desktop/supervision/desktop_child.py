"""A stand-in for the desktop app in a process of its own, for the no-orphans test: it opens a
conversation with the window's own launcher, starts a task whose command waits, prints the runtime's
PID, and then just runs its event loop until it is killed.

    python -m tests.desktop.supervision.desktop_child CONFIG_JSON
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import qasync
from PySide6.QtWidgets import QApplication

from desktop.approval.queue import ApprovalQueue
from desktop.conversation.session import ConversationSession
from desktop.conversation.state import ConversationState
from tests.desktop.supervision.live import StateWaiter, identity, launcher
from tests.support.backend import Backend


async def main(config: dict[str, object]) -> None:
    backend = Backend(**{**config["backend"], "data_dir": Path(str(config["backend"]["data_dir"]))})  # type: ignore[index, arg-type]
    approvals = ApprovalQueue()
    state = ConversationState()
    session = ConversationSession(
        state=state,
        launcher=launcher(config["env"], Path(str(config["logs"]))),  # type: ignore[arg-type]
        identity=identity(backend),
        folder=str(config["workspace"]),
        approvals=approvals,
    )
    waiter = StateWaiter(state)
    await session.send("Run the long command")
    pending = await waiter.until(approvals.head, what="the approval request")
    await session.approve(pending.approval_id, "approved", "once", "")
    started = Path(str(config["started"]))
    await waiter.until(started.exists, what="the command to start")
    print(json.dumps({"runtime": session.runtime_pid}), flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    app = QApplication(sys.argv[:1])
    with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
        runner.run(main(json.loads(sys.argv[1])))
