"""The elicitation dialog, driven as a user would: the form built from the server's schema, Accept
only once it is valid, each answer sent as the runtime expects it, and the dialog leaving when the
runtime says the request was resolved elsewhere."""

from __future__ import annotations

import json
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QLineEdit,
    QListWidget,
    QSpinBox,
)
from pytestqt.qtbot import QtBot

from contracts.events import ElicitationRequestedPayload
from contracts.methods import AnswerElicitationParams
from desktop.mcp.elicitation_dialog import ElicitationDialog
from desktop.mcp.elicitations import ElicitationQueue
from tests.desktop.mcp.requests import elicitation
from tests.desktop.mcp.widgets import assert_every_control_is_named

Answer = tuple[str, str, str, Any]


class Clock:
    def __init__(self) -> None:
        self.now = 500.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def queue() -> ElicitationQueue:
    return ElicitationQueue()


@pytest.fixture
def answers() -> list[Answer]:
    return []


@pytest.fixture
def dialog(qtbot: QtBot, queue: ElicitationQueue, clock: Clock, answers: list[Answer]) -> ElicitationDialog:
    widget = ElicitationDialog(queue, clock=clock, arm_delay_ms=0, session_label={"sess_1": "Booking"}.get)
    qtbot.addWidget(widget)
    widget.answered.connect(lambda *args: answers.append(args))
    return widget


def ask(queue: ElicitationQueue, clock: Clock, payload: dict[str, Any], session_id: str = "sess_1") -> None:
    queue.add(session_id, payload, received_at=clock.now)


def params(answer: Answer) -> dict[str, Any]:
    """The ``AnswerElicitation`` params the window sends for ``answer``, checked against the contract."""
    session_id, elicitation_id, action, content = answer
    wire: dict[str, Any] = {"sessionId": session_id, "elicitationId": elicitation_id, "action": action}
    if content is not None:
        wire["content"] = content
    AnswerElicitationParams.model_validate_json(json.dumps(wire))
    return wire


def test_the_test_requests_are_what_the_runtime_sends() -> None:
    ElicitationRequestedPayload.model_validate(elicitation())


def test_it_shows_which_server_asks_its_message_and_a_form_with_the_defaults(
    dialog: ElicitationDialog, queue: ElicitationQueue, clock: Clock
) -> None:
    assert not dialog.isVisible()
    ask(queue, clock, elicitation())

    assert dialog.isVisible()
    assert not dialog.isModal()
    assert QApplication.activeModalWidget() is None
    assert dialog.server_label.text() == "MCP server “tickets” asks for information"
    assert "tickets" in dialog.windowTitle()
    assert dialog.context_label.text() == "While running its tool book. Conversation: Booking."
    assert (
        dialog.message_view.toPlainText() == "How many seats should I book, and where should the tickets go?"
    )
    assert "goes to tickets" in dialog.caution_label.text()

    inputs = dialog.inputs
    assert isinstance(inputs["name"], QLineEdit)
    assert inputs["name"].text() == "Ada"
    assert isinstance(inputs["email"], QLineEdit)
    assert inputs["email"].placeholderText() == "name@example.com"
    assert isinstance(inputs["seats"], QSpinBox)
    assert (inputs["seats"].minimum(), inputs["seats"].maximum(), inputs["seats"].value()) == (0, 8, 2)
    assert isinstance(inputs["ratio"], QDoubleSpinBox)
    assert inputs["ratio"].text() == "Not set"  # no default: left out unless the user sets it
    assert isinstance(inputs["updates"], QCheckBox)
    assert not inputs["updates"].isChecked()
    assert isinstance(inputs["region"], QComboBox)
    assert [inputs["region"].itemText(i) for i in range(inputs["region"].count())] == [
        "(none)",
        "Europe",
        "United States",
    ]
    assert inputs["region"].currentText() == "Europe"
    assert isinstance(inputs["topics"], QListWidget)
    captions = [label.text() for label in dialog.findChildren(type(dialog.server_label)) if label.buddy()]
    assert "Your name *:" in captions
    assert "Email *:" in captions
    assert "Seats:" in captions


def test_accept_stays_disabled_until_the_form_is_valid_and_says_why(
    qtbot: QtBot, dialog: ElicitationDialog, queue: ElicitationQueue, clock: Clock, answers: list[Answer]
) -> None:
    ask(queue, clock, elicitation())
    email = dialog.inputs["email"]
    assert not dialog.accept_button.isEnabled()
    assert dialog.status_label.text() == "To accept: Email is required."

    qtbot.keyClicks(email, "ada at example")
    assert not dialog.accept_button.isEnabled()
    assert dialog.status_label.text() == "To accept: Email must be an email address (name@example.com)."
    problem = next(
        label
        for label in dialog.findChildren(type(dialog.status_label))
        if label.accessibleName() == "Problem with Email"
    )
    assert problem.isVisibleTo(dialog)

    dialog.accept_button.click()  # disabled: nothing happens
    assert answers == []

    email.clear()
    qtbot.keyClicks(email, "ada@example.org")
    assert dialog.accept_button.isEnabled()
    assert dialog.status_label.isHidden()
    assert not problem.isVisibleTo(dialog)


def test_bounds_hold_in_the_spin_boxes_and_an_emptied_required_field_disables_accept(
    qtbot: QtBot, dialog: ElicitationDialog, queue: ElicitationQueue, clock: Clock
) -> None:
    schema = {
        "type": "object",
        "properties": {
            "seats": {"type": "integer", "minimum": 1, "maximum": 8},
            "share": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.25},
        },
        "required": ["seats", "share"],
    }
    ask(queue, clock, elicitation(schema=schema))
    seats, share = dialog.inputs["seats"], dialog.inputs["share"]
    assert isinstance(seats, QSpinBox)
    assert isinstance(share, QDoubleSpinBox)
    assert seats.text() == "Not set"
    assert share.text() == "0.25"
    assert not dialog.accept_button.isEnabled()

    seats.setValue(50)  # beyond the maximum: the box holds 8
    assert seats.value() == 8
    assert dialog.accept_button.isEnabled()
    share.setValue(share.minimum())  # stepping below the minimum reads "Not set"
    assert share.text() == "Not set"
    assert not dialog.accept_button.isEnabled()
    assert dialog.status_label.text() == "To accept: share is required."


def test_accept_sends_what_the_form_shows(
    qtbot: QtBot, dialog: ElicitationDialog, queue: ElicitationQueue, clock: Clock, answers: list[Answer]
) -> None:
    ask(queue, clock, elicitation())
    inputs = dialog.inputs
    qtbot.keyClicks(inputs["email"], "ada@example.org")
    assert isinstance(inputs["seats"], QSpinBox)
    inputs["seats"].setValue(4)
    qtbot.keyClick(inputs["updates"], Qt.Key.Key_Space)
    assert isinstance(inputs["region"], QComboBox)
    inputs["region"].setCurrentIndex(inputs["region"].findText("United States"))
    topics = inputs["topics"]
    assert isinstance(topics, QListWidget)
    topics.item(2).setCheckState(Qt.CheckState.Checked)
    topics.item(0).setCheckState(Qt.CheckState.Checked)

    qtbot.mouseClick(dialog.accept_button, Qt.MouseButton.LeftButton)

    assert [params(answer) for answer in answers] == [
        {
            "sessionId": "sess_1",
            "elicitationId": "eli_1",
            "action": "accept",
            "content": {
                "name": "Ada",
                "email": "ada@example.org",
                "seats": 4,
                "updates": True,
                "region": "us",
                "topics": ["a", "c"],
            },
        }
    ]
    assert not dialog.isVisible()
    assert len(queue) == 0


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_decline_and_cancel_send_nothing_the_user_typed(
    qtbot: QtBot,
    dialog: ElicitationDialog,
    queue: ElicitationQueue,
    clock: Clock,
    answers: list[Answer],
    action: str,
) -> None:
    ask(queue, clock, elicitation())
    qtbot.keyClicks(dialog.inputs["email"], "ada@example.org")
    button = dialog.decline_button if action == "decline" else dialog.cancel_button
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)

    assert [params(answer) for answer in answers] == [
        {"sessionId": "sess_1", "elicitationId": "eli_1", "action": action}
    ]
    assert not dialog.isVisible()


def test_escape_and_closing_the_window_cancel_and_enter_answers_nothing(
    qtbot: QtBot, dialog: ElicitationDialog, queue: ElicitationQueue, clock: Clock, answers: list[Answer]
) -> None:
    ask(queue, clock, elicitation("eli_1"))
    ask(queue, clock, elicitation("eli_2"))
    qtbot.keyClicks(dialog.inputs["email"], "ada@example.org")
    qtbot.keyClick(dialog.inputs["email"], Qt.Key.Key_Return)
    assert answers == []  # Enter in a field never sends the form

    qtbot.keyClick(dialog.focusWidget() or dialog, Qt.Key.Key_Escape)
    assert [answer[1:3] for answer in answers] == [("eli_1", "cancel")]
    assert dialog.shown is not None
    assert dialog.shown.elicitation_id == "eli_2"

    dialog.close()
    assert [answer[1:3] for answer in answers] == [("eli_1", "cancel"), ("eli_2", "cancel")]
    assert not dialog.isVisible()


def test_resolved_elsewhere_the_request_leaves_and_the_dialog_closes(
    dialog: ElicitationDialog, queue: ElicitationQueue, clock: Clock, answers: list[Answer]
) -> None:
    ask(queue, clock, elicitation("eli_1"))
    ask(queue, clock, elicitation("eli_2", serverName="weather", toolName="forecast"), session_id="sess_2")
    assert dialog.waiting_label.text() == "1 more waiting"

    queue.discard("eli_1")  # elicitation_resolved: answered elsewhere, or its call ended
    assert dialog.shown is not None
    assert dialog.server_label.text() == "MCP server “weather” asks for information"
    assert dialog.waiting_label.text() == ""

    queue.discard_session("sess_2")  # the conversation's runtime went away
    assert not dialog.isVisible()
    assert answers == []


def test_a_refused_answer_comes_back_filled_in_with_the_servers_reason(
    dialog: ElicitationDialog, queue: ElicitationQueue, clock: Clock
) -> None:
    queue.add(
        "sess_1",
        elicitation(),
        received_at=clock.now,
        refusal="seats must be at most 8.",
        entered={"name": "Grace", "email": "grace@example.org", "seats": 3, "topics": ["b"]},
    )
    assert dialog.refusal_label.text() == (
        "tickets did not accept the answer: seats must be at most 8. Correct it and accept again, or decline."
    )
    assert dialog.refusal_label.isVisibleTo(dialog)
    name, email, seats = dialog.inputs["name"], dialog.inputs["email"], dialog.inputs["seats"]
    assert isinstance(name, QLineEdit)
    assert isinstance(email, QLineEdit)
    assert isinstance(seats, QSpinBox)
    assert (name.text(), email.text(), seats.value()) == ("Grace", "grace@example.org", 3)
    topics = dialog.inputs["topics"]
    assert isinstance(topics, QListWidget)
    assert [topics.item(i).checkState() == Qt.CheckState.Checked for i in range(3)] == [False, True, False]
    assert dialog.accept_button.isEnabled()

    queue.discard("eli_1")
    queue.add("sess_1", elicitation("eli_2"), received_at=clock.now)
    assert dialog.refusal_label.isHidden()


def test_a_request_with_a_time_limit_counts_down_and_leaves_when_it_runs_out(
    dialog: ElicitationDialog, queue: ElicitationQueue, clock: Clock, answers: list[Answer]
) -> None:
    ask(queue, clock, elicitation(timeoutSeconds=120))
    assert dialog.countdown_label.text() == "2:00 left"
    clock.now += 121
    dialog._on_tick()
    assert not dialog.isVisible()
    assert answers == []


def test_a_new_request_ignores_its_buttons_for_a_moment(
    qtbot: QtBot, queue: ElicitationQueue, clock: Clock, answers: list[Answer]
) -> None:
    dialog = ElicitationDialog(queue, clock=clock, arm_delay_ms=300)
    qtbot.addWidget(dialog)
    dialog.answered.connect(lambda *args: answers.append(args))
    ask(queue, clock, elicitation(schema={"type": "object", "properties": {}}))
    assert not dialog.armed
    assert not dialog.accept_button.isEnabled()
    dialog._answer("accept")
    dialog._answer("decline")
    assert answers == []
    qtbot.waitUntil(lambda: dialog.armed, timeout=5000)
    assert dialog.accept_button.isEnabled()
    dialog.accept_button.click()
    assert [answer[2:] for answer in answers] == [("accept", {})]


def test_wire_text_is_never_markup_and_hidden_characters_are_spelled_out(
    dialog: ElicitationDialog, queue: ElicitationQueue, clock: Clock
) -> None:
    ask(queue, clock, elicitation(serverName="tick\u202eets", message="<b>Pay</b> now"))
    assert dialog.message_view.toPlainText() == "<b>Pay</b> now"  # set as plain text, never markup
    assert "⟨U+202E⟩" in dialog.server_label.text()


def test_a_request_that_is_not_a_form_can_be_declined_but_not_accepted(
    dialog: ElicitationDialog, queue: ElicitationQueue, clock: Clock, answers: list[Answer]
) -> None:
    nested = {"type": "object", "properties": {"card": {"type": "object"}}, "required": ["card"]}
    ask(queue, clock, elicitation(schema=nested))
    assert not dialog.accept_button.isEnabled()
    assert "card cannot be answered here" in dialog.status_label.text()
    dialog.decline_button.click()
    assert [answer[2:] for answer in answers] == [("decline", None)]


def test_at_1024_by_640_the_form_keeps_its_size_and_every_control_has_an_accessible_name(
    qtbot: QtBot, dialog: ElicitationDialog, queue: ElicitationQueue, clock: Clock
) -> None:
    ask(queue, clock, elicitation(message="A long explanation of what the server wants. " * 200))
    minimum = dialog.minimumSizeHint().expandedTo(dialog.minimumSize())
    assert minimum.width() <= 1024
    assert minimum.height() <= 640 - 40  # a title bar fits above it on a 640-pixel-high screen
    dialog.resize(minimum)
    qtbot.waitUntil(lambda: dialog.size() == minimum, timeout=2000)
    QApplication.processEvents()
    viewport = dialog.form_scroll.viewport()
    assert viewport.height() >= 120, "the form is squeezed out by the message"
    assert viewport.width() >= 300
    for widget in dialog.inputs.values():
        assert widget.height() >= min(widget.minimumSizeHint().height(), 20)
    assert_every_control_is_named(dialog)

    dialog.resize(1024, 640)
    QApplication.processEvents()
    assert dialog.form_scroll.viewport().height() > viewport.height() - 1
