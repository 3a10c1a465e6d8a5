"""The whole app with an MCP server: ``DesktopApp`` with its window, a real runtime, the local backend
with a policy that allows the server's tools, and the server named in the project's
``.cowork/mcp.json``. The server's request for input appears in the window's dialog, the answer the
user types reaches the server, and Settings lists the server."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit
from pytestqt.qtbot import QtBot

from agent_runtime.scripted_gateway import ScriptedGatewayThread
from desktop.app.bootstrap import OpenRequest
from desktop.conversation.items import ToolCallRow
from desktop.mcp.elicitation_dialog import ElicitationDialog
from desktop.settings.dialog import SettingsDialog
from tests.desktop.app.harness import app_environment, current, eventually, running_app, tool_rows
from tests.desktop.mcp.requests import SERVER
from tests.desktop.supervision.live import tool_call
from tests.desktop.support import Run
from tests.support.backend import Backend


def test_the_window_asks_for_the_servers_input_and_settings_lists_the_server(
    run: Run[None], qtbot: QtBot, backend: Backend, workspace: Path, home: Path
) -> None:
    script = [tool_call(f"{SERVER}__ask", "c1"), {"text": "Done."}]

    async def scenario() -> None:
        with ScriptedGatewayThread({"turns": script}) as gateway:
            env = app_environment(home, backend, gateway.url, approval_mode="never")
            opening = OpenRequest(str(workspace), "Ask me something")
            async with running_app(env, home / "logs", opening=opening) as window:
                dialog = await eventually(
                    lambda: next((d for d in window.findChildren(ElicitationDialog) if d.isVisible()), None),
                    what="the elicitation dialog",
                    timeout=60,
                    window=window,
                )
                await eventually(lambda: dialog.armed, what="the dialog's buttons to take input")
                assert dialog.server_label.text() == f"MCP server “{SERVER}” asks for information"
                assert "Conversation:" in dialog.context_label.text()
                name = dialog.inputs["name"]
                assert isinstance(name, QLineEdit)
                name.clear()
                qtbot.keyClicks(name, "Grace")
                qtbot.mouseClick(dialog.accept_button, Qt.MouseButton.LeftButton)

                session = current(window)
                await eventually(
                    lambda: session.state.status.task == "TASK_COMPLETED",
                    what="the task's end",
                    timeout=60,
                    window=window,
                )
                assert any(f"{SERVER}/ask" in row for row in tool_rows(window))
                row = next(item for item in session.state.items if isinstance(item, ToolCallRow))
                assert json.loads(row.output or "{}")["content"]["name"] == "Grace"  # what the server got

                window.settings_action.trigger()
                settings = await eventually(
                    lambda: next((d for d in window.findChildren(SettingsDialog) if d.isVisible()), None),
                    what="Settings",
                )
                page = settings.mcp_servers
                rows = await eventually(
                    lambda: page.rows() if not session.state.mcp_servers.refreshing else None,
                    what="the MCP servers listed",
                )
                assert rows[0][:2] == (SERVER, "Connected")
                settings.reject()

    run(scenario())
