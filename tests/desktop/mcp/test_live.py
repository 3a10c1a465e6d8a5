"""The window's MCP side against the real thing: a runtime process started by the window's own
launcher, the local backend with a policy that allows the server's tools, the official SDK's MCP
server on loopback named in the project's ``.cowork/mcp.json``, and a scripted model that calls its
tools. The server asks for input (elicitation) and the user answers in the real dialog; it reports
progress; Settings' list comes from ``GetMcpServers``; an approval names the server and the arguments."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import httpx
from mcp.server.mcpserver import MCPServer
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit, QSpinBox
from pytestqt.qtbot import QtBot

from agent_runtime.scripted_gateway import ScriptedGatewayThread
from desktop.approval.present import describe
from desktop.approval.queue import ApprovalQueue
from desktop.conversation.items import Item, SignInNotice, ToolCallRow, ToolState
from desktop.conversation.session import ConversationSession, TaskDefaults
from desktop.conversation.state import ConversationState
from desktop.mcp.elicitation_dialog import ElicitationDialog
from desktop.mcp.elicitations import ElicitationQueue
from tests.desktop.mcp.requests import SERVER
from tests.desktop.supervision.live import StateWaiter, identity, launcher, runtime_env, tool_call
from tests.desktop.support import Run
from tests.support.backend import Backend
from tests.support.mcp_oauth_server import OAuthTestServer


def open_session(
    backend: Backend, gateway_url: str, tmp_path: Path, workspace: Path, approval_mode: str
) -> tuple[ConversationSession, ApprovalQueue, ElicitationQueue, StateWaiter]:
    env = runtime_env(backend, gateway_url, tmp_path / "runtime-data")
    approvals, elicitations = ApprovalQueue(), ElicitationQueue()
    session = ConversationSession(
        state=ConversationState(),
        launcher=launcher(env, tmp_path / "logs"),
        identity=identity(backend),
        folder=str(workspace),
        approvals=approvals,
        elicitations=elicitations,
        defaults=lambda: TaskDefaults(approval_mode=approval_mode),
    )
    return session, approvals, elicitations, StateWaiter(session.state)


def tool_rows(state: ConversationState) -> list[ToolCallRow]:
    return [item for item in state.items if isinstance(item, ToolCallRow)]


class ProgressLog:
    """Every progress text a tool row showed (it changes faster than a test could look)."""

    def __init__(self, state: ConversationState) -> None:
        self.seen: list[str] = []
        state.subscribe(self)

    def item_changed(self, item: Item) -> None:
        if isinstance(item, ToolCallRow) and item.progress and item.progress not in self.seen:
            self.seen.append(item.progress)

    def item_added(self, item: Item) -> None:
        pass

    def items_reset(self) -> None:
        pass

    def status_changed(self) -> None:
        pass

    def banner_changed(self) -> None:
        pass


def test_the_user_answers_a_servers_request_for_input_in_the_dialog(
    run: Run[None], qtbot: QtBot, backend: Backend, workspace: Path, tmp_path: Path
) -> None:
    script = [
        tool_call(f"{SERVER}__ask", "c1"),
        tool_call(f"{SERVER}__slow", "c2", seconds=0.5),
        {"text": "Booked."},
    ]

    async def scenario() -> None:
        with ScriptedGatewayThread({"turns": script}) as gateway:
            session, _approvals, elicitations, waiter = open_session(
                backend, gateway.url, tmp_path, workspace, "never"
            )
            progress = ProgressLog(session.state)
            dialog = ElicitationDialog(elicitations, arm_delay_ms=0)
            qtbot.addWidget(dialog)
            sent: list[asyncio.Task[bool]] = []  # as the workbench sends the dialog's answers

            def answered(_session_id: str, elicitation_id: str, action: str, content: Any) -> None:
                sent.append(
                    asyncio.ensure_future(session.answer_elicitation(elicitation_id, action, content))
                )

            dialog.answered.connect(answered)
            try:
                await session.send("Book two seats")
                pending = await waiter.until(elicitations.head, what="the server's request for input")
                assert pending.server_name == SERVER
                assert pending.tool_name == "ask"
                assert dialog.isVisible()
                assert dialog.server_label.text() == f"MCP server “{SERVER}” asks for information"
                assert dialog.message_view.toPlainText() == "Tell me"
                name, count = dialog.inputs["name"], dialog.inputs["count"]
                assert isinstance(name, QLineEdit)
                assert isinstance(count, QSpinBox)
                assert (name.text(), count.value()) == ("Ada", 2)  # the schema's defaults
                row = tool_rows(session.state)[0]
                assert row.progress == f"{SERVER} asks for your input"

                name.clear()
                qtbot.keyClicks(name, "Grace")
                count.setValue(3)
                qtbot.mouseClick(dialog.accept_button, Qt.MouseButton.LeftButton)

                await waiter.until(
                    lambda: session.state.status.task == "TASK_COMPLETED", what="the task's end", timeout=60
                )
                assert [task.result() for task in sent] == [True]
                first, second = tool_rows(session.state)
                assert first.state is ToolState.SUCCEEDED
                echoed = json.loads(first.output or "{}")
                assert echoed == {
                    "action": "accept",
                    "content": {"name": "Grace", "count": 3, "color": "green"},
                }
                assert second.state is ToolState.SUCCEEDED
                assert "1 of 2 · halfway" in progress.seen
                assert not dialog.isVisible()

                listed = session.state.mcp_servers
                assert listed.find(SERVER) is not None  # from the mcp_server_state_changed events
                await session.refresh_mcp_servers()
                server = listed.find(SERVER)
                assert server is not None
                assert (server.state_text, server.url) == ("Connected", workspace_url(workspace))
                assert server.tool_count > 0
            finally:
                await session.close()

    run(scenario())


def test_an_mcp_tool_that_needs_approval_names_the_server_and_the_arguments(
    run: Run[None], backend: Backend, workspace: Path, tmp_path: Path
) -> None:
    script = [tool_call(f"{SERVER}__echo", "c1", text="hello, server"), {"text": "Done."}]

    async def scenario() -> None:
        with ScriptedGatewayThread({"turns": script}) as gateway:
            session, approvals, _elicitations, waiter = open_session(
                backend, gateway.url, tmp_path, workspace, "always"
            )
            try:
                await session.send("Echo something")
                pending = await waiter.until(approvals.head, what="the approval request", timeout=60)
                rows = {row.label: row.value for row in describe(pending.request).rows}
                assert rows["MCP tool"] == f"Server: {SERVER} · Tool: echo"
                assert json.loads(rows["Arguments"]) == {"text": "hello, server"}
                await session.approve(pending.approval_id, "approved", "once", "")
                await waiter.until(
                    lambda: session.state.status.task == "TASK_COMPLETED", what="the task's end", timeout=60
                )
                assert tool_rows(session.state)[0].output == "hello, server"
            finally:
                await session.close()

    run(scenario())


def workspace_url(workspace: Path) -> str:
    config = json.loads((workspace / ".cowork" / "mcp.json").read_text())
    return str(config["servers"][0]["url"])


def test_signing_in_to_a_server_opens_its_page_and_the_runtime_finishes_the_sign_in(
    run: Run[None], backend: Backend, tmp_path: Path
) -> None:
    """The server answers 401 until the user signs in: the window hands the authorization page to the
    browser (here, a stand-in that follows the authorization server's redirect back to the runtime's
    loopback address, as a browser would after the user approves) and the tool works from then on."""
    visited: list[str] = []

    def browser(url: str) -> bool:
        def follow() -> None:
            with httpx.Client(timeout=10) as client:
                answer = client.get(url)
                client.get(answer.headers["location"])

        visited.append(url)
        threading.Thread(target=follow, daemon=True).start()
        return True

    guarded = MCPServer(SERVER)

    @guarded.tool()
    def echo(text: str) -> str:
        """Say the text back."""
        return text

    inner = guarded.streamable_http_app(streamable_http_path="/mcp")
    with (
        OAuthTestServer(inner_app=inner) as server,
        ScriptedGatewayThread(
            {
                "turns": [
                    {"text": "Sign in to tickets first."},
                    tool_call(f"{SERVER}__echo", "c1", text="signed in"),
                    {"text": "Done."},
                ]
            }
        ) as gateway,
    ):
        project = (tmp_path / "project").resolve()
        (project / ".cowork").mkdir(parents=True)
        config = {
            "servers": [
                {
                    "name": SERVER,
                    "url": server.mcp_url,
                    "allowInsecureLoopback": True,
                    "auth": {"type": "oauth"},
                }
            ]
        }
        (project / ".cowork" / "mcp.json").write_text(json.dumps(config))
        env = runtime_env(
            backend,
            gateway.url,
            tmp_path / "runtime-data",
            PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
        )
        session = ConversationSession(
            state=ConversationState(),
            launcher=launcher(env, tmp_path / "logs"),
            identity=identity(backend),
            folder=str(project),
            approvals=ApprovalQueue(),
            elicitations=ElicitationQueue(),
            open_url=browser,
            defaults=lambda: TaskDefaults(approval_mode="never"),
        )
        waiter = StateWaiter(session.state)

        async def scenario() -> None:
            try:
                await session.send("Hello")
                notice = await waiter.until(
                    lambda: next((i for i in session.state.items if isinstance(i, SignInNotice)), None),
                    what="the sign-in notice",
                    timeout=60,
                )
                assert notice.server_name == SERVER
                assert notice.opened
                assert visited == [notice.url]
                assert notice.url.startswith(f"{server.origin}/")
                connected = await waiter.until(
                    lambda: (row := session.state.mcp_servers.find(SERVER)) and row.state == "connected",
                    what="the server connected once signed in",
                    timeout=60,
                )
                assert connected
                await waiter.until(
                    lambda: session.state.status.task == "TASK_COMPLETED",
                    what="the first task's end",
                    timeout=60,
                )
                await session.send("Echo")
                await waiter.until(
                    lambda: tool_rows(session.state) and session.state.status.task == "TASK_COMPLETED",
                    what="the tool call's task to end",
                    timeout=60,
                )
                assert tool_rows(session.state)[0].output == "signed in"
            finally:
                await session.close()

        run(scenario())
