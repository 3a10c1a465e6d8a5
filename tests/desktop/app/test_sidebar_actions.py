"""The sidebar's conversation actions on the real widget: the context menu, F2 renames in place, the
Delete key asks for a deletion, the search filters as you type; the header's usage line."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QAction
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from desktop.app.header_view import usage_text, usage_tooltip
from desktop.app.sidebar_view import SidebarView
from desktop.conversation.pricing import ModelPrice, PriceTable, Usage
from desktop.conversation.sidebar import build_sidebar, summarize_history

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def sidebar_view(qtbot: QtBot) -> SidebarView:
    view = SidebarView(QAction("New in folder"), QAction("New chat"))
    qtbot.addWidget(view)
    summaries = [
        summarize_history(
            {
                "sessionId": session,
                "workspaceId": "ws",
                "messages": [
                    {"sessionId": session, "role": "user", "content": prompt},
                    {"sessionId": session, "role": "assistant", "content": reply},
                ],
            },
            folder=None,
            updated_at=T0 + timedelta(minutes=minute),
        )
        for session, prompt, reply, minute in (
            ("s1", "Fix the build", "The linker flags were wrong.", 1),
            ("s2", "Plan a trip", "Lisbon in May?", 2),
        )
    ]
    view.show_sidebar(build_sidebar(summaries), None)
    with qtbot.waitExposed(view):
        view.show()
    view.activateWindow()
    qtbot.waitUntil(view.isActiveWindow)
    return view


def test_the_context_menu_offers_rename_export_and_delete(qtbot: QtBot) -> None:
    view = sidebar_view(qtbot)
    first = view.index_of("s2")
    view.tree.customContextMenuRequested.emit(view.tree.visualRect(first).center())
    assert view.menu is not None
    assert [a.text().replace("&", "") for a in view.menu.actions() if a.text()] == [
        "Rename",
        "Export as Markdown…",
        "Export as JSON…",
        "Delete…",
    ]
    assert view.current_key() == "s2"
    exported: list[tuple[str, str]] = []
    view.export_requested.connect(lambda key, kind: exported.append((key, kind)))
    view.export_json_action.trigger()
    assert exported == [("s2", "json")]
    view.tree.customContextMenuRequested.emit(QPoint(-5, -5))  # not on a conversation: no menu
    assert view.tree.accessibleName() == "Conversations"
    assert view.search.accessibleName() == "Search conversations"


def test_delete_key_asks_for_the_current_conversation(qtbot: QtBot) -> None:
    view = sidebar_view(qtbot)
    asked: list[str] = []
    view.delete_requested.connect(asked.append)
    view.tree.setCurrentIndex(view.index_of("s1"))
    view.tree.setFocus()
    QTest.keyClick(view.tree, Qt.Key.Key_Delete)
    assert asked == ["s1"]


def test_f2_renames_in_place_and_an_unchanged_name_is_not_a_rename(qtbot: QtBot) -> None:
    view = sidebar_view(qtbot)
    renamed: list[tuple[str, str]] = []
    view.rename_requested.connect(lambda key, title: renamed.append((key, title)))
    view.tree.setCurrentIndex(view.index_of("s1"))
    view.tree.setFocus()
    QTest.keyClick(view.tree, Qt.Key.Key_F2)
    editor = QApplication.focusWidget()
    assert editor is not None
    assert editor is not view.tree
    QTest.keyClick(editor, Qt.Key.Key_Return)  # kept as it was
    qtbot.waitUntil(lambda: QApplication.focusWidget() is view.tree)
    assert renamed == []
    view.rename_current()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is not view.tree)
    editor = QApplication.focusWidget()
    assert editor is not None
    QTest.keyClick(editor, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    QTest.keyClicks(editor, "Build fixes")
    QTest.keyClick(editor, Qt.Key.Key_Return)  # the delegate commits on the next turn of the loop
    qtbot.waitUntil(lambda: bool(renamed))
    assert renamed == [("s1", "Build fixes")]


def test_the_search_filters_as_you_type(qtbot: QtBot) -> None:
    view = sidebar_view(qtbot)
    QTest.keyClicks(view.search, "lisb")
    assert view.titles() == [("General chats", ["Plan a trip"])]
    view.search.clear()
    assert view.titles() == [("General chats", ["Plan a trip", "Fix the build"])]


def test_the_usage_line_says_tokens_cost_or_an_unknown_price() -> None:
    prices = PriceTable({"m": ModelPrice(2.0, 10.0)})
    usage = Usage()
    assert usage_text(usage, prices) == "No tokens used yet"
    usage.add_call({"model": "m", "inputTokens": 12_000, "outputTokens": 3_000})
    assert usage_text(usage, prices) == "15.0k tokens · ≈ $0.05"
    usage.add_call({"model": "other", "inputTokens": 1, "outputTokens": 1})
    assert usage_text(usage, prices) == "15.0k tokens · unknown price (other)"
    tip = usage_tooltip(usage, prices)
    assert "m: 12000 input, 3000 output, 0 cache read, 0 cache write tokens in 1 calls — $0.05" in tip
    assert "other: 1 input, 1 output" in tip
    assert "unknown price" in tip
