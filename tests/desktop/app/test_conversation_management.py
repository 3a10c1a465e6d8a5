"""Managing conversations in the real app (real runtimes, the real local backend, a scripted gateway):
the header shows the model, the gateway, the tokens and their estimated cost; another model is chosen
for the next task; the last prompt is edited or retried; the sidebar finds a conversation as you type,
renames it in place (kept across a restart), exports it to Markdown and JSON, and deletes it — after
asking — from the backend too."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from agent_runtime.scripted_gateway import ScriptedGatewayThread
from desktop.app.bootstrap import journal_path
from desktop.app.main_window import MainWindow
from desktop.app.sidebar_view import KEY_ROLE
from desktop.conversation.history_client import BackendUnavailable, HistoryClient
from desktop.conversation.pricing import ModelPrice, PriceTable
from desktop.conversation.titles import TitleStore
from desktop.settings.store import SettingsStore
from tests.desktop.app.harness import (
    app_environment,
    assistant_texts,
    current,
    eventually,
    running_app,
    sidebar_titles,
    type_and_send,
    workbench,
)
from tests.desktop.support import Run
from tests.support.backend import Backend

PROMPT = "Plan the zebra migration"
USAGE = {
    "inputTokens": 1_000_000,
    "outputTokens": 100_000,
    "cacheReadTokens": 2_000_000,
    "cacheWriteTokens": 0,
}


def turn(text: str) -> dict[str, Any]:
    return {"text": text, "usage": USAGE}


def conversation_key(window: MainWindow, title: str) -> str:
    for row in range(window.sidebar.model.rowCount()):
        heading = window.sidebar.model.index(row, 0)
        for child in range(window.sidebar.model.rowCount(heading)):
            index = window.sidebar.model.index(child, 0, heading)
            if index.data() == title:
                key = index.data(KEY_ROLE)
                assert isinstance(key, str)
                return key
    raise AssertionError(f"{title!r} is not in the sidebar: {sidebar_titles(window)}")


def all_titles(window: MainWindow) -> list[str]:
    """Every conversation the sidebar shows (other tests' conversations share the backend)."""
    return [title for _, titles in sidebar_titles(window) for title in titles]


def task_ended(window: MainWindow, count: int) -> bool:
    """The ``count``-th task has answered and ended (each scripted turn is one reply)."""
    return len(assistant_texts(window)) >= count and current(window).state.status.task == "TASK_COMPLETED"


def test_header_model_usage_cost_edit_retry_search_rename_export_and_delete(
    run: Run[None], backend: Backend, workspace: Path, home: Path, qtbot: QtBot, tmp_path: Path
) -> None:
    script = [
        turn("Zebras move in herds."),
        turn("With the bigger model."),
        turn("Retried."),
        turn("Soon forgotten."),
    ]

    async def scenario() -> None:
        with ScriptedGatewayThread({"turns": script}) as gateway:
            env = app_environment(home, backend, gateway.url)
            SettingsStore().save_prices(PriceTable({"demo-model": ModelPrice(3.0, 15.0, 0.3, 3.75)}))
            async with running_app(env, home / "logs") as window:
                window.show()
                window.new_conversation(str(workspace))
                type_and_send(window, PROMPT)
                await eventually(lambda: task_ended(window, 1), what="the first task's end", window=window)
                header = window.header
                # The model and the gateway it goes through …
                assert header.model_combo.currentText() == "demo-model"
                assert header.gateway.text() == f"via {gateway.url.split('://', 1)[1]}"
                # … and the tokens with their cost: $3 + $1.50 + $0.60.
                assert header.usage.text() == "3.10M tokens · ≈ $5.10"
                assert "1000000 input, 100000 output, 2000000 cache read" in header.usage.toolTip()
                # Another model, unpriced, for the next task: the request carries it, the cost is unknown.
                line = header.model_combo.lineEdit()
                assert line is not None
                line.setFocus()
                QTest.keyClick(line, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
                QTest.keyClicks(line, "bigger-model")
                QTest.keyClick(line, Qt.Key.Key_Return)
                assert current(window).model == "bigger-model"
                type_and_send(window, "Now with more thought")
                await eventually(lambda: task_ended(window, 2), what="the second task's end", window=window)
                assert gateway.requests[-1].body["model"] == "bigger-model"
                assert header.usage.text().endswith("unknown price (bigger-model)")
                # Edit the last prompt: it comes back into the composer.
                assert window.edit_last_action.isEnabled()
                window.edit_last_action.trigger()
                assert window.composer.edit.toPlainText() == "Now with more thought"
                window.composer.edit.clear()
                # Retry the last task: the same prompt again, a new task.
                window.retry_action.trigger()
                await eventually(lambda: task_ended(window, 3), what="the retried task's end", window=window)
                assert assistant_texts(window)[-1] == "Retried."
                prompts = [r.body["messages"][-1]["content"] for r in gateway.requests]
                assert _text(prompts[-1]) == "Now with more thought"

                # The sidebar: filter as you type, by title and by reply text.
                await eventually(
                    lambda: (workspace.name, [PROMPT]) in sidebar_titles(window),
                    what="the stored conversation",
                )
                search = window.sidebar.search
                window.find_action.trigger()
                assert search.hasFocus()
                QTest.keyClicks(search, "herds")
                assert all_titles(window) == [PROMPT], "only this conversation mentions herds"
                search.setText("flamingo")
                assert sidebar_titles(window) == []
                assert window.sidebar.placeholder.text() == "No conversation matches your search."
                search.clear()

                # Rename in place (F2), kept in the names file.
                key = conversation_key(window, PROMPT)
                tree = window.sidebar.tree
                tree.setCurrentIndex(window.sidebar.index_of(key))
                tree.setFocus()
                QTest.keyClick(tree, Qt.Key.Key_F2)
                editor = await eventually(
                    lambda: QApplication.focusWidget() is not tree and QApplication.focusWidget()
                )
                assert isinstance(editor, QWidget)
                QTest.keyClick(editor, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
                QTest.keyClicks(editor, "Zebra plans")
                QTest.keyClick(editor, Qt.Key.Key_Return)
                await eventually(
                    lambda: (workspace.name, ["Zebra plans"]) in sidebar_titles(window), what="the new name"
                )
                assert window.title.text() == "Zebra plans"
                names = TitleStore(journal_path().with_name("conversation-names.json"))
                assert names.title_of(current(window).chain) == "Zebra plans"

                # Export to Markdown and JSON through the file dialog.
                for action, name in (
                    (window.sidebar.export_markdown_action, "zebra.md"),
                    (window.sidebar.export_json_action, "zebra.json"),
                ):
                    tree.setCurrentIndex(window.sidebar.index_of(conversation_key(window, "Zebra plans")))
                    action.trigger()
                    dialog = window.conversation_actions.export_dialog
                    assert dialog is not None
                    dialog.fileSelected.emit(str(tmp_path / name))
                    await eventually(lambda n=name: (tmp_path / n).exists(), what=f"the {name} export")
                markdown = (tmp_path / "zebra.md").read_text(encoding="utf-8")
                assert markdown.startswith("# Zebra plans\n")
                order = [markdown.index(t) for t in (PROMPT, "Zebras move in herds.", "Retried.")]
                assert order == sorted(order)
                exported = json.loads((tmp_path / "zebra.json").read_text(encoding="utf-8"))
                assert [m["content"] for m in exported["messages"] if m["role"] == "user"] == [
                    PROMPT,
                    "Now with more thought",
                    "Now with more thought",
                ]

                # An open conversation deleted: its runtime shuts down (uploading its history), and
                # the history goes after that, so it does not come back.
                window.new_conversation(None)
                type_and_send(window, "Doomed chat")
                await eventually(lambda: task_ended(window, 1), what="the doomed task's end", window=window)
                await eventually(lambda: "Doomed chat" in all_titles(window), what="the stored chat")
                actions = window.conversation_actions
                actions.ask_to_delete(conversation_key(window, "Doomed chat"))
                assert actions.delete_question is not None
                assert actions.delete_button is not None
                qtbot.mouseClick(actions.delete_button, Qt.MouseButton.LeftButton)
                await eventually(
                    lambda: "Doomed chat" not in all_titles(window),
                    what="the sidebar without the deleted chat",
                )
                assert (workspace.name, ["Zebra plans"]) in sidebar_titles(window)
                assert workbench(window).current is None
                assert window.runner is not None
                await window.runner.wait_idle(60)  # the runtime shut down, the history deleted

        # After a restart, the name is still there; Delete asks, then the conversation is gone for good.
        with ScriptedGatewayThread({"turns": []}) as gateway:
            env = app_environment(home, backend, gateway.url)
            async with running_app(env, home / "logs") as window:
                window.show()
                await eventually(
                    lambda: (workspace.name, ["Zebra plans"]) in sidebar_titles(window),
                    what="the renamed conversation after a restart",
                )
                assert "Doomed chat" not in all_titles(window), "the deleted chat stays gone"
                key = conversation_key(window, "Zebra plans")
                summary = workbench(window).summary_of(key)
                assert summary is not None
                tree = window.sidebar.tree
                tree.setCurrentIndex(window.sidebar.index_of(key))
                tree.setFocus()
                QTest.keyClick(tree, Qt.Key.Key_Delete)
                actions = window.conversation_actions
                question = await eventually(lambda: actions.delete_question, what="the delete question")
                assert question.isVisible()
                assert "Zebra plans" in question.text()
                assert question.defaultButton() is not actions.delete_button, "Enter must not delete"
                assert actions.delete_button is not None
                qtbot.mouseClick(actions.delete_button, Qt.MouseButton.LeftButton)
                await eventually(
                    lambda: "Zebra plans" not in all_titles(window), what="the deletion in the sidebar"
                )
                assert window.runner is not None
                await window.runner.wait_idle(60)
                await _history_gone(backend, summary.workspace_id, summary.session_id)
                # A history a runtime sent late (in the background, or at the next start) is not shown.
                workbench(window).refresh()
                await window.runner.wait_idle(60)
                assert "Zebra plans" not in all_titles(window)

    run(scenario())


async def _history_gone(backend: Backend, workspace_id: str, session_id: str) -> None:
    """The backend holds no history of the session (a late upload may come and be deleted again)."""
    client = HistoryClient(backend.url, backend.token)
    try:
        deadline = asyncio.get_running_loop().time() + 20
        while True:
            try:
                if await client.history(workspace_id, session_id) is None:
                    return
            except BackendUnavailable:  # listed, then deleted before its content was read
                pass
            assert asyncio.get_running_loop().time() < deadline, "the history is still in the backend"
            await asyncio.sleep(0.1)
    finally:
        await client.aclose()


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    assert isinstance(content, list)
    return "".join(block.get("text", "") for block in content if isinstance(block, dict))
