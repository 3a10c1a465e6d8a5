"""The conversation pane on its own, driven through a ConversationState: streaming Markdown that is
drawn once per frame and never redraws what settled, and a bounded number of widgets however long
the conversation grows."""

from __future__ import annotations

from PySide6.QtGui import QTextBlockUserData
from pytestqt.qtbot import QtBot

from desktop.app.code_blocks import CodeBlockView
from desktop.app.conversation_view import FIRST_SHOWN, WINDOW, ConversationView
from desktop.app.messages import AssistantView, ProseView, ToolRowView
from desktop.conversation.items import AssistantMessage
from desktop.conversation.state import ConversationState
from tests.desktop.conversation.events import chunk, event

ANSWER = (
    "# Plan\n\nI will **read** the file first, then `edit` it.\n\n"
    "```python\ndef main():\n\n    return 1\n```\n\n"
    "1. one\n2. two\n\n> A quote\n\nThe end, with a [link](https://example.com)."
)


class Marker(QTextBlockUserData):
    pass


def view_with_state(qtbot: QtBot) -> tuple[ConversationView, ConversationState]:
    view = ConversationView()
    qtbot.addWidget(view)
    view.resize(700, 500)
    view.show()
    state = ConversationState()
    view.show_state(state)
    return view, state


def test_a_streamed_answer_ends_exactly_as_markdown_renders_it(qtbot: QtBot) -> None:
    view, state = view_with_state(qtbot)
    for start in range(0, len(ANSWER), 3):
        state.apply(chunk(ANSWER[start : start + 3]))
        if start % 12 == 0:
            view.flush()
    [widget] = view.widgets()
    assert isinstance(widget, AssistantView)
    view.flush()
    streamed = widget.plain_text()
    state.apply(
        event("llm_request_completed", {"model": "m", "inputTokens": 1, "outputTokens": 1, "latencyMs": 1})
    )
    view.flush()
    whole = AssistantMessage(1)
    whole.append(ANSWER)
    reference = AssistantView(whole)
    qtbot.addWidget(reference)
    assert _drawn(widget) == _drawn(reference)
    assert streamed.split() == reference.plain_text().split()
    [code] = widget.code_blocks()
    assert code.code == "def main():\n\n    return 1"


def _drawn(view: AssistantView) -> list[str]:
    return [
        part.code if isinstance(part, CodeBlockView) else part.document().toMarkdown() for part in view.parts
    ]


def test_settled_blocks_are_not_redrawn_while_the_answer_streams(qtbot: QtBot) -> None:
    view, state = view_with_state(qtbot)
    state.apply(chunk("First paragraph, settled.\n\nSecond"))
    view.flush()
    [widget] = view.widgets()
    assert isinstance(widget, AssistantView)
    prose = widget.parts[0]
    assert isinstance(prose, ProseView)
    first = prose.document().firstBlock()
    first.setUserData(Marker())
    for word in [" paragraph", " keeps", " growing", "\n\nThird"]:
        state.apply(chunk(word))
        view.flush()
    # The first block is the same block object the whole time: drawn once, never replaced.
    assert isinstance(prose.document().firstBlock().userData(), Marker)
    assert widget.plain_text().split("\n") == [
        "First paragraph, settled.",
        "Second paragraph keeps growing",
        "Third",
    ]


def test_many_chunks_between_two_frames_cost_one_redraw(qtbot: QtBot) -> None:
    view, state = view_with_state(qtbot)
    state.apply(chunk("start "))
    view.flush()
    frames = view.frames
    for _ in range(500):
        state.apply(chunk("word "))
    qtbot.waitUntil(lambda: view.frames > frames, timeout=2000)
    assert view.frames == frames + 1
    [widget] = view.widgets()
    assert isinstance(widget, AssistantView)
    assert widget.plain_text().count("word") == 500


def test_the_number_of_widgets_stays_bounded_however_long_the_conversation(qtbot: QtBot) -> None:
    view, state = view_with_state(qtbot)
    for n in range(1000):
        state.add_user_message(f"prompt {n}", None)
        state.apply(chunk(f"answer {n}", step=f"step_{n}"))
    view.flush()
    assert view.widget_count <= WINDOW
    assert view.earlier.isVisible()
    before = view.widget_count
    view.show_earlier()
    assert view.widget_count == before + FIRST_SHOWN
    texts = [w.item.key for w in view.widgets()]
    assert texts == sorted(texts), "widgets stay in conversation order"


def test_a_tool_row_expands_to_its_output(qtbot: QtBot) -> None:
    view, state = view_with_state(qtbot)
    state.apply(
        event("tool_requested", {"toolName": "RunCommand", "toolCallId": "c1", "target": "make test"})
    )
    state.apply(
        event(
            "tool_completed",
            {
                "toolName": "RunCommand",
                "toolCallId": "c1",
                "status": "failed",
                "latencyMs": 1500,
                "outputPreview": "3 failed",
            },
        )
    )
    view.flush()
    [row] = view.widgets()
    assert isinstance(row, ToolRowView)
    assert row.header.text() == "✗  RunCommand  make test · 1.5 s — failed"
    assert not row.output.isVisibleTo(row)
    row.header.click()
    assert row.output.isVisibleTo(row)
    assert row.output.toPlainText() == "3 failed"
