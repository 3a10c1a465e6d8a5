"""The real desktop app in a process of its own, for the crash test: it opens a conversation in a
folder, sends a prompt, approves what the task asks, prints ``ready`` once the task's command runs,
and waits — to be killed without warning.

    python -m tests.desktop.app.crashing_app CONFIG_JSON      # {"env", "logs", "folder", "prompt", "started"}
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import qasync
from PySide6.QtWidgets import QApplication

from desktop.approval.dialog import ApprovalDialog
from tests.desktop.app.harness import eventually, running_app, type_and_send


async def main(config: dict[str, Any]) -> None:
    async with running_app(config["env"], Path(config["logs"])) as window:
        window.new_conversation(config["folder"])
        type_and_send(window, config["prompt"])
        dialog = window.approval_dialog
        assert isinstance(dialog, ApprovalDialog)
        await eventually(lambda: dialog.isVisible() and dialog.armed, what="the approval dialog")
        dialog.approve_button.click()
        await eventually(Path(config["started"]).exists, what="the command to start")
        print("ready", flush=True)
        await asyncio.Event().wait()


if __name__ == "__main__":
    app = QApplication(sys.argv[:1])
    with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
        runner.run(main(json.loads(sys.argv[1])))
