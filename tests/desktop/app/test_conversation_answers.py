"""Answers people can use, on the real conversation widgets offscreen: code blocks highlighted once
they close, with a Copy button; inline code drawn as code; long lines wrapped; a scroll bar that
behaves like a chat's; tool rows that say who refused a call and how long the approval took; a
cancelled answer kept and marked; screen readers told when an answer is complete."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QAccessible, QGuiApplication, QTextBlockUserData
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from desktop.app.code_blocks import guess_language
from desktop.app.conversation_view import FIRST_SHOWN, ConversationView
from desktop.app.messages import AssistantView, ProseView, ToolRowView, UserView
from desktop.conversation.items import AssistantMessage, Denial, ToolState
from desktop.conversation.journal import CancelledReply, SessionJournal
from desktop.conversation.state import ConversationState
from tests.desktop.conversation.events import chunk, event

CODE = "def add(a, b):\n    return a + b  # the sum"
LONG = "https://example.com/" + "a" * 400


class Marker(QTextBlockUserData):
    pass


def shown(qtbot: QtBot, width: int = 700, height: int = 500) -> tuple[ConversationView, ConversationState]:
    view = ConversationView()
    qtbot.addWidget(view)
    view.resize(width, height)
    view.show()
    state = ConversationState()
    view.show_state(state)
    return view, state


def stream(view: ConversationView, state: ConversationState, text: str, size: int = 4) -> None:
    for start in range(0, len(text), size):
        state.apply(chunk(text[start : start + size]))
        view.flush()


def finish(view: ConversationView, state: ConversationState) -> None:
    completed = {"model": "m", "inputTokens": 1, "outputTokens": 1, "latencyMs": 1}
    state.apply(event("llm_request_completed", completed))
    view.flush()


def settle(qtbot: QtBot) -> None:
    for _ in range(3):
        QApplication.processEvents()
    qtbot.wait(20)


def answer_of(view: ConversationView) -> AssistantView:
    [answer] = [w for w in view.widgets() if isinstance(w, AssistantView)]
    return answer


# ------------------------------------------------------------------------------------- code blocks


def test_a_code_block_is_highlighted_when_it_closes_and_copy_puts_its_code_on_the_clipboard(
    qtbot: QtBot,
) -> None:
    view, state = shown(qtbot)
    stream(view, state, f"Here it is:\n\n```python\n{CODE}\n")
    [block] = answer_of(view).code_blocks()
    assert block.code == CODE + "\n"
    assert not block.highlighted, "an open block is shown plain while it streams"
    stream(view, state, "```\n\nThat is all.")
    [block] = answer_of(view).code_blocks()
    assert block.code == CODE
    qtbot.waitUntil(lambda: block.highlighted, timeout=2000)
    assert block.language_label.text() == "python"
    colours = {
        fragment.charFormat().foreground().color().name()
        for fragment in _fragments(block.text.document())
        if fragment.text().strip()
    }
    assert len(colours) >= 3, "keywords, names, operators and comments in colours of their own"
    assert block.copy_button.accessibleName() == "Copy code block"
    block.copy_button.click()
    assert QGuiApplication.clipboard().text() == CODE


def test_a_code_block_without_a_language_is_recognised(qtbot: QtBot) -> None:
    view, state = shown(qtbot)
    stream(view, state, 'Config:\n\n```\n{"name": "cowork", "port": 8080}\n```\n')
    finish(view, state)
    [block] = answer_of(view).code_blocks()
    qtbot.waitUntil(lambda: block.highlighted, timeout=2000)
    assert block.language_label.text() == "json"
    assert guess_language("import os\n\nprint(os.getcwd())") == "python"
    assert guess_language("just some words") == ""


def test_closed_parts_are_never_drawn_again_while_the_answer_streams(qtbot: QtBot) -> None:
    view, state = shown(qtbot)
    stream(view, state, f"```python\n{CODE}\n```\n\nNow the second part")
    answer = answer_of(view)
    [block] = answer.code_blocks()
    qtbot.waitUntil(lambda: block.highlighted, timeout=2000)
    block.text.document().firstBlock().setUserData(Marker())
    for word in [" keeps", " growing", "\n\nand", " growing", "\n\n```sh\nls\n", "```\n\nEnd."]:
        state.apply(chunk(word))
        view.flush()
    finish(view, state)
    first = answer.code_blocks()[0]
    assert first is block
    assert isinstance(block.text.document().firstBlock().userData(), Marker)
    assert [type(part).__name__ for part in answer.parts] == [
        "CodeBlockView",
        "ProseView",
        "CodeBlockView",
        "ProseView",
    ]
    assert answer.code_blocks()[1].code == "ls"
    settle(qtbot)
    assert isinstance(block.text.document().firstBlock().userData(), Marker), "not highlighted again"


def test_an_answer_with_many_code_blocks_stays_in_order(qtbot: QtBot) -> None:
    view, state = shown(qtbot)
    text = "".join(f"Step {n}:\n\n```sh\necho {n}\n```\n\n" for n in range(40)) + "Done."
    stream(view, state, text, size=7)
    finish(view, state)
    answer = answer_of(view)
    assert [block.code for block in answer.code_blocks()] == [f"echo {n}" for n in range(40)]
    whole = AssistantMessage(1)
    whole.append(text)
    reference = AssistantView(whole)
    qtbot.addWidget(reference)
    assert answer.plain_text() == reference.plain_text()
    settle(qtbot)
    tops = [part.mapTo(answer, part.rect().topLeft()).y() for part in answer.parts]
    assert tops == sorted(tops), "drawn top to bottom in the answer's order"


def test_a_long_code_block_is_highlighted_a_slice_at_a_time(qtbot: QtBot) -> None:
    view, state = shown(qtbot)
    code = "\n".join(f"def f{n}(x):\n    return x * {n}  # line {n}" for n in range(600))
    stream(view, state, f"```python\n{code}\n```\n", size=4096)
    [block] = answer_of(view).code_blocks()
    assert block.highlighting, "not all at once: the window keeps drawing meanwhile"
    assert block.text.document().toPlainText() == code, "shown plain until the colours are ready"
    qtbot.waitUntil(lambda: block.highlighted, timeout=5000)
    assert block.text.document().toPlainText() == code


def test_an_answer_the_runtime_discarded_is_drawn_again_from_nothing(qtbot: QtBot) -> None:
    view, state = shown(qtbot)
    stream(view, state, f"First try:\n\n```python\n{CODE}\n```\n\nand more\n\n" * 20, size=64)
    state.apply(event("llm_request_started", {"model": "m", "estimatedInputTokens": 1}))
    stream(view, state, "Second try.")
    finish(view, state)
    answer = answer_of(view)
    assert answer.code_blocks() == []
    assert answer.plain_text() == "Second try."


def test_inline_code_is_monospace_on_a_background(qtbot: QtBot) -> None:
    view, state = shown(qtbot)
    stream(view, state, "Run `make test` first.")
    finish(view, state)
    [prose] = answer_of(view).parts
    assert isinstance(prose, ProseView)
    [code] = [f for f in _fragments(prose.document()) if f.text() == "make test"]
    fmt = code.charFormat()
    assert fmt.fontFixedPitch()
    assert fmt.background().style().name != "NoBrush"
    assert fmt.background().color() != prose.palette().color(prose.palette().ColorRole.Text)


def _fragments(document: Any) -> list[Any]:
    found = []
    block = document.begin()
    while block.isValid():
        iterator = block.begin()
        while not iterator.atEnd():
            found.append(iterator.fragment())
            iterator += 1
        block = block.next()
    return found


# -------------------------------------------------------------------------------------- wrapping


def test_long_lines_wrap_instead_of_widening_the_conversation(qtbot: QtBot) -> None:
    view, state = shown(qtbot, width=500)
    state.add_user_message(f"Open {LONG}", None)
    stream(view, state, f"See {LONG}\n\n```\n{LONG}\n```\n")
    finish(view, state)
    state.apply(event("tool_requested", {"toolName": "RunCommand", "toolCallId": "c1", "target": LONG}))
    state.apply(
        event(
            "tool_completed",
            {
                "toolName": "RunCommand",
                "toolCallId": "c1",
                "status": "succeeded",
                "latencyMs": 5,
                "outputPreview": LONG,
            },
        )
    )
    view.flush()
    [row] = [w for w in view.widgets() if isinstance(w, ToolRowView)]
    row.header.click()
    settle(qtbot)
    width = view.viewport().width()
    body = view.widget()
    assert body is not None
    assert body.width() <= width
    for widget in view.widgets():
        assert widget.width() <= width, type(widget).__name__
    user = next(w for w in view.widgets() if isinstance(w, UserView))
    assert user.text.document().size().height() > 2 * user.fontMetrics().lineSpacing(), "wrapped"
    assert row.output.width() <= width
    assert row.output.document().size().height() > 1, "the output's long line is wrapped"
    assert row.output.height() > 2 * row.output.fontMetrics().lineSpacing()


# ------------------------------------------------------------------------------------- scrolling


def _history(turns: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for n in range(turns):
        messages.append({"role": "user", "content": f"Question {n}", "taskId": f"t{n}", "sessionId": "s"})
        messages.append(
            {"role": "assistant", "content": f"Answer {n}.\n\nIt has two paragraphs.", "taskId": f"t{n}"}
        )
    return messages


def test_a_long_conversation_opens_at_its_newest_message_with_the_thumb_at_the_bottom(qtbot: QtBot) -> None:
    view, _ = shown(qtbot)
    state = ConversationState()
    state.load_history(_history(300))
    view.show_state(state)
    settle(qtbot)
    bar = view.verticalScrollBar()
    assert bar.maximum() > 0
    assert bar.value() == bar.maximum()
    newest = view.widgets()[-1]
    assert newest.item is state.items[-1]
    assert newest.y() + newest.height() <= bar.value() + view.viewport().height() + 20
    # Oldest at the top: the widgets go down the page in conversation order.
    tops = [w.y() for w in view.widgets()]
    assert tops == sorted(tops)


def test_the_thumb_is_drawn_where_the_shown_messages_are(qtbot: QtBot) -> None:
    """The thumb is the dark part of the bar: at the bottom at the newest messages, at the top at
    the oldest (a light handle on a darker groove read the other way round)."""
    view, _ = shown(qtbot)
    state = ConversationState()
    state.load_history(_history(25))  # all of it shown: nothing more loads at the top
    view.show_state(state)
    settle(qtbot)
    bar = view.verticalScrollBar()

    def darkness(fraction: float) -> int:
        image = bar.grab().toImage()
        return 255 - image.pixelColor(image.width() // 2, int(image.height() * fraction)).lightness()

    assert bar.value() == bar.maximum() > 2 * bar.pageStep()
    assert darkness(0.95) > darkness(0.05) + 40
    bar.setValue(0)
    settle(qtbot)
    assert view.widgets()[0].item is state.items[0]
    assert darkness(0.05) > darkness(0.95) + 40


def test_earlier_messages_come_in_above_without_moving_what_is_read(qtbot: QtBot) -> None:
    view, _ = shown(qtbot)
    state = ConversationState()
    state.load_history(_history(300))
    view.show_state(state)
    settle(qtbot)
    bar = view.verticalScrollBar()
    first = view.widgets()[0]
    count = view.widget_count
    bar.setValue(first.y() - 10)  # reading the oldest message shown, not yet at the very top
    settle(qtbot)
    on_screen = first.y() - bar.value()
    view.show_earlier()
    settle(qtbot)
    assert view.widget_count == count + FIRST_SHOWN
    assert first.y() - bar.value() == on_screen, "the message being read stays where it was"
    assert bar.value() > bar.minimum(), "the thumb moved down: there is more above now"
    # Scrolling to the very top brings in the batch before that by itself.
    count = view.widget_count
    bar.setValue(0)
    qtbot.waitUntil(lambda: view.widget_count == count + FIRST_SHOWN, timeout=2000)
    settle(qtbot)
    assert bar.value() > 0


def test_the_view_follows_a_streaming_answer_unless_the_user_scrolled_up(qtbot: QtBot) -> None:
    view, state = shown(qtbot)
    state.load_history(_history(30))
    settle(qtbot)
    bar = view.verticalScrollBar()
    stream(view, state, "A long answer.\n\n" * 30)
    settle(qtbot)
    assert bar.value() == bar.maximum()
    middle = bar.maximum() // 2
    bar.setValue(middle)
    settle(qtbot)
    stream(view, state, "More.\n\n" * 30)
    settle(qtbot)
    assert bar.value() == middle, "scrolled up, the view stays where the user reads"
    assert bar.maximum() > 2 * middle
    view.scroll_to_end()
    stream(view, state, "Even more.\n\n" * 10)
    settle(qtbot)
    assert bar.value() == bar.maximum()


# ------------------------------------------------------------------------------------- tool rows


def _tool(state: ConversationState, payload: dict[str, Any]) -> None:
    state.apply(event("tool_requested", {"toolName": "WriteFile", "toolCallId": "c1", "target": "/p/a.txt"}))
    state.apply(
        event(
            "approval_requested",
            {"approvalId": "a1", "stepId": "step_1", "details": {"toolName": "WriteFile"}},
        )
    )
    state.apply(event("approval_resolved", payload))


def test_a_tool_row_shows_its_own_time_and_the_wait_for_approval_apart(qtbot: QtBot) -> None:
    view, state = shown(qtbot)
    _tool(state, {"approvalId": "a1", "decision": "approved", "latencyMs": 12_000})
    state.apply(
        event(
            "tool_completed",
            {"toolName": "WriteFile", "toolCallId": "c1", "status": "succeeded", "latencyMs": 12_400},
        )
    )
    view.flush()
    [row] = view.widgets()
    assert isinstance(row, ToolRowView)
    assert row.header.text() == "✓  WriteFile  /p/a.txt · 400 ms · waited 12.0 s for approval"


def test_a_denial_by_the_user_reads_differently_from_one_by_the_policy(qtbot: QtBot) -> None:
    view, state = shown(qtbot)
    _tool(state, {"approvalId": "a1", "decision": "denied", "latencyMs": 3000})
    state.apply(
        event(
            "tool_completed",
            {
                "toolName": "WriteFile",
                "toolCallId": "c1",
                "status": "denied",
                "latencyMs": 3000,
                "error": {"code": "APPROVAL_DENIED", "message": "Not approved: I still need it"},
            },
        )
    )
    state.apply(event("tool_requested", {"toolName": "RunCommand", "toolCallId": "c2", "target": "rm -rf /"}))
    state.apply(
        event(
            "tool_completed",
            {
                "toolName": "RunCommand",
                "toolCallId": "c2",
                "status": "denied",
                "latencyMs": 0,
                "error": {
                    "code": "CAPABILITY_DENIED",
                    "message": "Commands outside the allowlist are blocked.",
                },
            },
        )
    )
    view.flush()
    user, policy = [w for w in view.widgets() if isinstance(w, ToolRowView)]
    assert user.row.denial is Denial.USER
    assert user.header.text() == "⊘  WriteFile  /p/a.txt — You denied this"
    assert policy.row.denial is Denial.POLICY
    assert policy.header.text() == (
        "⊘  RunCommand  rm -rf / — Blocked by policy: Commands outside the allowlist are blocked"
    )
    # The same words when the conversation is opened again from its history.
    stored = ConversationState()
    stored.load_history(
        [
            {"role": "user", "content": "Clean up", "taskId": "t"},
            {
                "role": "assistant",
                "content": "",
                "taskId": "t",
                "toolCalls": [
                    {"toolName": "WriteFile", "toolCallId": "c1", "arguments": {"path": "/p/a.txt"}},
                    {"toolName": "RunCommand", "toolCallId": "c2", "arguments": {"command": "rm -rf /"}},
                ],
            },
            {
                "role": "tool",
                "toolCallId": "c1",
                "toolStatus": "denied",
                "content": "Denied: Not approved: I still need it",
            },
            {
                "role": "tool",
                "toolCallId": "c2",
                "toolStatus": "denied",
                "content": "Denied: Commands outside the allowlist are blocked.",
            },
        ]
    )
    view.show_state(stored)
    rows = [w.header.text() for w in view.widgets() if isinstance(w, ToolRowView)]
    assert rows == [
        "⊘  WriteFile  /p/a.txt — You denied this",
        "⊘  RunCommand  rm -rf / — Blocked by policy: Commands outside the allowlist are blocked",
    ]


# ---------------------------------------------------------------------------------- cancellation


def test_a_cancelled_answer_stays_marked_and_is_shown_again_from_the_journal(
    qtbot: QtBot, tmp_path: Path
) -> None:
    view, state = shown(qtbot)
    state.add_user_message("Explain it", "task_1")
    stream(view, state, "Half of the expla")
    state.apply(event("task_cancelled", {"stepCount": 1, "reason": "cancelled"}, step=None))
    view.flush()
    answer = answer_of(view)
    assert answer.message.cancelled
    assert answer.cancelled_label.isVisibleTo(answer)
    assert answer.plain_text() == "Half of the expla"
    journal = SessionJournal(tmp_path / "open-sessions.json")
    for reply in state.cancelled_replies("sess_1"):
        journal.cancelled.add(reply)
    # Reopened: the history has the prompt (and the next task) but not the cut-off answer.
    reopened = ConversationState()
    history = [
        {"role": "user", "content": "Explain it", "taskId": "task_1", "sessionId": "sess_1"},
        {"role": "user", "content": "Shorter, please", "taskId": "task_2", "sessionId": "sess_1"},
        {"role": "assistant", "content": "Short.", "taskId": "task_2", "sessionId": "sess_1"},
    ]
    reopened.load_history(history, journal.cancelled.for_tasks({"task_1", "task_2"}))
    kinds = [(type(i).__name__, getattr(i, "cancelled", False)) for i in reopened.items]
    assert kinds == [
        ("UserMessage", False),
        ("AssistantMessage", True),
        ("UserMessage", False),
        ("AssistantMessage", False),
    ]
    view.show_state(reopened)
    shown_again = next(w for w in view.widgets() if isinstance(w, AssistantView))
    assert shown_again.cancelled_label.isVisibleTo(shown_again)
    assert shown_again.plain_text() == "Half of the expla"


def test_the_cancelled_answers_file_is_bounded_and_survives_damage(tmp_path: Path) -> None:
    journal = SessionJournal(tmp_path / "open-sessions.json")
    for n in range(205):
        journal.cancelled.add(CancelledReply("s", f"t{n}", None, f"answer {n}"))
    kept = journal.cancelled.for_tasks({f"t{n}" for n in range(205)})
    assert len(kept) == 200
    assert kept[0].task_id == "t5"
    journal.cancelled.path.write_text("{not json")
    assert journal.cancelled.for_tasks({"t5"}) == []
    journal.cancelled.add(CancelledReply("s", "t9", "step", "again"))
    assert [r.text for r in journal.cancelled.for_tasks({"t9"})] == ["again"]


# -------------------------------------------------------------------------------- screen readers


def test_a_streamed_answer_is_announced_once_when_it_is_complete(qtbot: QtBot) -> None:
    view, state = shown(qtbot)
    announced: list[str] = []
    view.announced.connect(announced.append)
    stream(view, state, "The build passes now.")
    assert announced == []
    QAccessible.setActive(True)  # as with a screen reader running: the event goes to the bridge
    try:
        finish(view, state)
        view.flush()
    finally:
        QAccessible.setActive(False)
    assert announced == ["Cowork answered: The build passes now."]
    answer = answer_of(view)
    assert answer.accessibleDescription() == announced[0]
    # A conversation opened from its history is not read out.
    opened = ConversationState()
    opened.load_history(_history(3))
    view.show_state(opened)
    assert announced == ["Cowork answered: The build passes now."]


def test_the_announcement_uses_qt_s_announcement_event() -> None:
    from PySide6 import QtGui

    from desktop.app import messages

    # This Qt has announcement events, so the view posts one (not only the accessible description).
    assert hasattr(QtGui, "QAccessibleAnnouncementEvent")
    assert vars(messages)["QAccessibleAnnouncementEvent"] is QtGui.QAccessibleAnnouncementEvent


@pytest.mark.parametrize("state_", [ToolState.RUNNING, ToolState.FAILED])
def test_tool_rows_are_reachable_by_keyboard(qtbot: QtBot, state_: ToolState) -> None:
    view, state = shown(qtbot)
    state.apply(event("tool_requested", {"toolName": "ReadFile", "toolCallId": "c1", "target": "/p/x"}))
    view.flush()
    [row] = view.widgets()
    assert isinstance(row, ToolRowView)
    assert row.header.focusPolicy() & row.header.focusPolicy().TabFocus
    assert row.header.accessibleName().startswith("⋯  ReadFile")
    assert isinstance(AssistantMessage(1), AssistantMessage)
