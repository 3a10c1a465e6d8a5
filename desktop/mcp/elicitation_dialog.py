"""The window in which the user answers an MCP server's request for input (elicitation, form mode).

It shows the oldest request of the :class:`ElicitationQueue` — which server asks, while running which
tool, in which conversation, and the server's message — and a form built from the request's schema
(:mod:`desktop.mcp.form`): a line edit for text (the format's shape as a hint), a spin box for numbers
within the schema's bounds, a check box for yes/no, a list to choose from for choices; defaults filled
in, required fields marked with ``*``. The buttons answer it:

* **Accept** sends what the form holds; it stays disabled until the form is valid, and the line above
  the buttons says what is missing.
* **Decline** tells the server the user will not provide it; **Cancel** (Esc, or closing the window)
  dismisses it without a choice. Neither sends anything the user typed.

Like the approval dialog it is not modal, nothing answers on Enter, and a new request ignores its
buttons for :data:`ARM_DELAY_MS` so a keystroke meant for something else cannot answer it. When the
runtime says the request was resolved (answered elsewhere, timed out, its call ended) it leaves the
queue and the dialog moves on to the next one, or closes.

``answered(session_id, elicitation_id, action, content)``: action ``accept``/``decline``/``cancel``;
content the form's values for ``accept``, else ``None``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from desktop.approval.present import reveal_hidden
from desktop.approval.request_dialog import ARM_DELAY_MS, RequestDialog, plain_label
from desktop.i18n import translate
from desktop.mcp.elicitations import ElicitationQueue, PendingElicitation
from desktop.mcp.form import ElicitationForm, FieldKind, FormField

__all__ = ["ElicitationDialog"]

_INT_LIMIT = 2_000_000_000
"""A spin box of whole numbers holds 32-bit values; a schema without bounds gets these."""
_NUMBER_LIMIT = 1e15
_CHOICE_ROWS = 6
_MESSAGE_LINES = 6


class ElicitationDialog(RequestDialog[PendingElicitation]):
    """See the module docstring."""

    answered = Signal(str, str, str, object)

    def __init__(
        self,
        queue: ElicitationQueue,
        parent: QWidget | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        arm_delay_ms: int = ARM_DELAY_MS,
        session_label: Callable[[str], str] | None = None,
    ) -> None:
        super().__init__(queue, parent, clock=clock, arm_delay_ms=arm_delay_ms, session_label=session_label)
        self._form: ElicitationForm | None = None
        self.inputs: dict[str, QWidget] = {}
        """The input widget of each field, by property name (what tests and screen readers reach)."""
        self._problems: dict[str, QLabel] = {}
        self._touched: set[str] = set()

        self.setWindowTitle(translate("Elicitation", "An MCP server asks for information — Cowork"))
        self.setMinimumSize(460, 380)
        self.resize(560, 520)
        self._build()
        self._follow_queue()

    # ------------------------------------------------------------------ what tests read

    @property
    def form(self) -> ElicitationForm | None:
        return self._form

    # ------------------------------------------------------------------ layout

    def _build(self) -> None:
        self.server_label = QLabel()
        self.server_label.setObjectName("elicitationServer")
        self.server_label.setTextFormat(Qt.TextFormat.PlainText)
        self.server_label.setWordWrap(True)
        font = QFont(self.server_label.font())
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.2)
        self.server_label.setFont(font)
        header = QHBoxLayout()
        header.addWidget(self.server_label, 1)
        header.addWidget(self.countdown_label, 0, Qt.AlignmentFlag.AlignTop)

        self.context_label = plain_label()
        self.context_label.setAccessibleName(translate("Elicitation", "Who asks"))
        # Plain text in its own frame: as tall as the message up to a few lines, then it scrolls
        # rather than pushing the form off a small screen.
        self.message_view = QTextBrowser()
        self.message_view.setObjectName("elicitationMessage")
        self.message_view.setAccessibleName(translate("Elicitation", "The server's message"))
        self.message_view.setOpenLinks(False)
        self.message_view.setTabChangesFocus(True)
        self.message_view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.message_view.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.caution_label = plain_label()
        self.caution_label.setAccessibleName(translate("Elicitation", "Caution"))
        self.caution_label.setObjectName("elicitationCaution")

        self._form_body = QWidget()
        self._form_layout = QFormLayout(self._form_body)
        self._form_layout.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.form_scroll = QScrollArea()
        self.form_scroll.setWidgetResizable(True)
        self.form_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.form_scroll.setWidget(self._form_body)
        self.form_scroll.setMinimumHeight(140)
        self.form_scroll.setAccessibleName(translate("Elicitation", "Form"))

        self.refusal_label = plain_label()
        self.refusal_label.setObjectName("elicitationRefusal")
        self.refusal_label.setStyleSheet("QLabel#elicitationRefusal { color: #c62828; }")
        self.refusal_label.setAccessibleName(translate("Elicitation", "Why the server refused the answer"))
        self.status_label = plain_label()
        self.status_label.setAccessibleName(translate("Elicitation", "What is missing"))
        self.cancel_button = QPushButton(translate("Elicitation", "Cancel"))
        self.cancel_button.setToolTip(
            translate("Elicitation", "Dismiss the request without answering it (Esc)")
        )
        self.decline_button = QPushButton(translate("Elicitation", "&Decline"))
        self.accept_button = QPushButton(translate("Elicitation", "&Accept"))
        for button in (self.cancel_button, self.decline_button, self.accept_button):
            button.setAutoDefault(False)
            button.setDefault(False)
        self.cancel_button.clicked.connect(lambda: self._answer("cancel"))
        self.decline_button.clicked.connect(lambda: self._answer("decline"))
        self.accept_button.clicked.connect(lambda: self._answer("accept"))
        buttons = QHBoxLayout()
        buttons.addWidget(self.waiting_label)
        buttons.addStretch(1)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.decline_button)
        buttons.addWidget(self.accept_button)

        layout = QVBoxLayout(self)
        layout.addLayout(header)
        layout.addWidget(self.context_label)
        layout.addWidget(self.message_view)
        layout.addWidget(self.caution_label)
        layout.addWidget(self.form_scroll, 1)
        layout.addWidget(self.refusal_label)
        layout.addWidget(self.status_label)
        layout.addLayout(buttons)

    def _fit_message(self) -> None:
        """As tall as the message, up to :data:`_MESSAGE_LINES` lines; longer ones scroll."""
        view = self.message_view
        document = view.document()
        width = view.viewport().width()
        if width > 0:
            document.setTextWidth(width)
        needed = math.ceil(document.size().height())
        limit = view.fontMetrics().lineSpacing() * _MESSAGE_LINES + 2 * math.ceil(document.documentMargin())
        view.setFixedHeight(min(needed, limit) + 2 * view.frameWidth())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_message()

    # ------------------------------------------------------------------ following the queue

    def _cleared(self) -> None:
        self._form = None

    def _show_request(self, pending: PendingElicitation) -> None:
        server = reveal_hidden(pending.server_name)
        tool = reveal_hidden(pending.tool_name)
        self.server_label.setText(
            translate("Elicitation", "MCP server “{server}” asks for information").format(server=server)
        )
        conversation = self._session_label(pending.session_id) if self._session_label else ""
        context = (
            translate("Elicitation", "While running its tool {tool}.").format(tool=tool)
            if tool
            else translate("Elicitation", "While one of its tools runs.")
        )
        if conversation:
            context += translate("Elicitation", " Conversation: {name}.").format(name=conversation)
        self.context_label.setText(context)
        message = reveal_hidden(pending.message.strip())
        self.message_view.setPlainText(message or translate("Elicitation", "(The server gave no message.)"))
        self.message_view.verticalScrollBar().setValue(0)
        self._fit_message()
        self.caution_label.setText(
            translate(
                "Elicitation",
                "What you enter goes to {server}. Never enter passwords, keys or other secrets in this form.",
            ).format(server=server)
        )
        self.setWindowTitle(
            translate("Elicitation", "{server} asks for information — Cowork").format(server=server)
        )
        form = ElicitationForm(pending.schema)
        for name, value in (pending.entered or {}).items():
            if name in form.values:
                form.set(name, value)
        self.refusal_label.setText(
            translate(
                "Elicitation",
                "{server} did not accept the answer: {refusal}. Correct it and accept again, or decline.",
            ).format(server=server, refusal=reveal_hidden(pending.refusal).rstrip("."))
            if pending.refusal
            else ""
        )
        self.refusal_label.setVisible(bool(pending.refusal))
        self._build_form(form)

    def _build_form(self, form: ElicitationForm) -> None:
        self._form = form
        self._touched = set()
        self.inputs = {}
        self._problems = {}
        while self._form_layout.rowCount():
            self._form_layout.removeRow(0)
        if not form.fields and not form.schema_problem:
            note = plain_label(
                translate("Elicitation", "Nothing to fill in: Accept answers yes, Decline answers no.")
            )
            self._form_layout.addRow(note)
        for spec in form.fields:
            self._add_row(spec)
        first = next(iter(self.inputs.values()), None)
        if first is not None:
            first.setFocus(Qt.FocusReason.OtherFocusReason)
        else:
            self.cancel_button.setFocus(Qt.FocusReason.OtherFocusReason)
        self.form_scroll.verticalScrollBar().setValue(0)
        self._validate()

    def _add_row(self, spec: FormField) -> None:
        label = reveal_hidden(spec.label) + (" *" if spec.required else "")
        description = reveal_hidden(spec.description)
        editor = self._editor(spec)
        editor.setAccessibleName(reveal_hidden(spec.label))
        editor.setAccessibleDescription(
            " ".join(
                part
                for part in (description, translate("Elicitation", "Required.") if spec.required else "")
                if part
            )
        )
        if description:
            editor.setToolTip(description)
        problem = plain_label()
        problem.setObjectName("fieldProblem")
        problem.setStyleSheet("QLabel#fieldProblem { color: #c62828; }")
        problem.setAccessibleName(
            translate("Elicitation", "Problem with {field}").format(field=reveal_hidden(spec.label))
        )
        problem.hide()
        self._problems[spec.name] = problem
        column = QWidget()
        column.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)  # extra room goes below
        stack = QVBoxLayout(column)
        stack.setContentsMargins(0, 0, 0, 0)
        stack.setSpacing(2)
        stack.addWidget(editor)
        if description:
            note = plain_label(description)
            note.setObjectName("fieldDescription")
            note.setStyleSheet("QLabel#fieldDescription { color: palette(placeholder-text); }")
            stack.addWidget(note)
        stack.addWidget(problem)
        if spec.kind is FieldKind.BOOLEAN:
            self._form_layout.addRow("", column)
        else:
            caption = QLabel(f"{label}:")
            caption.setTextFormat(Qt.TextFormat.PlainText)
            caption.setBuddy(editor)
            caption.setWordWrap(True)
            self._form_layout.addRow(caption, column)
        if spec.kind is not FieldKind.UNSUPPORTED:
            self.inputs[spec.name] = editor

    def _editor(self, spec: FormField) -> QWidget:
        form = self._form
        assert form is not None
        value = form.values.get(spec.name)
        name = spec.name
        if spec.kind is FieldKind.TEXT:
            edit = QLineEdit(str(value or ""))
            edit.setPlaceholderText(spec.hint)
            edit.textChanged.connect(lambda text: self._entered(name, text))
            return edit
        if spec.kind is FieldKind.INTEGER:
            box = _IntegerBox(spec, value)
            box.valueChanged.connect(lambda _v: self._entered(name, box.entered()))
            return box
        if spec.kind is FieldKind.NUMBER:
            number = _NumberBox(spec, value)
            number.valueChanged.connect(lambda _v: self._entered(name, number.entered()))
            return number
        if spec.kind is FieldKind.BOOLEAN:
            check = QCheckBox(reveal_hidden(spec.label) + (" *" if spec.required else ""))
            check.setChecked(bool(value))
            check.toggled.connect(lambda on: self._entered(name, bool(on)))
            return check
        if spec.kind is FieldKind.CHOICE:
            combo = QComboBox()
            if not spec.required:
                combo.addItem(translate("Elicitation", "(none)"), None)
            for option in spec.options:
                combo.addItem(reveal_hidden(option.label), option.value)
            index = combo.findData(value) if value is not None else (-1 if spec.required else 0)
            combo.setPlaceholderText(translate("Elicitation", "Choose one…"))
            combo.setCurrentIndex(index)
            combo.currentIndexChanged.connect(lambda _i: self._entered(name, combo.currentData()))
            return combo
        if spec.kind is FieldKind.MULTI_CHOICE:
            return self._choices(spec, list(value or []))
        note = plain_label(
            translate("Elicitation", "Cannot be entered here: {reason}.").format(
                reason=spec.unsupported_reason
            )
        )
        note.setAccessibleName(reveal_hidden(spec.label))
        return note

    def _choices(self, spec: FormField, chosen: list[str]) -> QListWidget:
        listed = QListWidget()
        for option in spec.options:
            item = QListWidgetItem(reveal_hidden(option.label))
            item.setData(Qt.ItemDataRole.UserRole, option.value)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if option.value in chosen else Qt.CheckState.Unchecked)
            listed.addItem(item)
        rows = min(len(spec.options), _CHOICE_ROWS)
        height = listed.sizeHintForRow(0) * rows + 2 * listed.frameWidth() + 4 if rows else 40
        listed.setMinimumHeight(height)
        listed.setMaximumHeight(height)
        name = spec.name

        def checked() -> list[str]:
            return [
                str(listed.item(i).data(Qt.ItemDataRole.UserRole))
                for i in range(listed.count())
                if listed.item(i).checkState() == Qt.CheckState.Checked
            ]

        listed.itemChanged.connect(lambda _item: self._entered(name, checked()))
        return listed

    # ------------------------------------------------------------------ validating

    def _entered(self, name: str, value: Any) -> None:
        form = self._form
        if form is None:
            return
        form.set(name, value)
        self._touched.add(name)
        self._validate()

    def _validate(self) -> None:
        form = self._form
        if form is None:
            return
        problems = form.problems()
        for name, label in self._problems.items():
            text = problems.get(name, "")
            # A field's own problem shows once the user has changed it (not a wall of "required" at
            # first sight); the line above the buttons always says what stops Accept.
            label.setText(text)
            label.setVisible(bool(text) and (name in self._touched or name not in self.inputs))
        if problems:
            first = next(iter(problems.values()))
            more = len(problems) - 1
            self.status_label.setText(
                translate("Elicitation", "To accept: {problem} (and {count} more)").format(
                    problem=first, count=more
                )
                if more
                else translate("Elicitation", "To accept: {problem}").format(problem=first)
            )
        else:
            self.status_label.setText("")
        self.status_label.setVisible(bool(problems))
        self.accept_button.setEnabled(self._armed and not problems)
        self.accept_button.setToolTip(
            translate("Elicitation", "Send what you entered to {server}").format(
                server=reveal_hidden(self._shown.server_name)
            )
            if self._shown is not None and not problems
            else translate("Elicitation", "Fill in the form first")
        )
        if self._shown is not None:
            server = reveal_hidden(self._shown.server_name)
            self.decline_button.setToolTip(
                translate("Elicitation", "Tell {server} you will not provide this").format(server=server)
            )

    # ------------------------------------------------------------------ arming

    def _arm_buttons(self, armed: bool) -> None:
        self.decline_button.setEnabled(armed)
        if armed:
            self._validate()  # Accept also waits for a valid form
        else:
            self.accept_button.setEnabled(False)

    # ------------------------------------------------------------------ answering

    def _answer(self, action: str) -> None:
        pending, form = self._shown, self._form
        if pending is None or self._queue.get(pending.elicitation_id) is None:
            return
        # Cancel always works (it sends nothing and the server goes on without); the others wait until
        # the request has been on screen long enough to have been read.
        if action != "cancel" and not self._armed:
            return
        content: dict[str, Any] | None = None
        if action == "accept":
            if form is None or not form.valid:
                return
            content = form.content()
        self._queue.discard(pending.elicitation_id)
        self.answered.emit(pending.session_id, pending.elicitation_id, action, content)

    def reject(self) -> None:
        """Esc: cancel (nothing typed is sent)."""
        self._answer("cancel")


class _IntegerBox(QSpinBox):
    """A whole number within the schema's bounds; the value one below them reads "Not set"."""

    def __init__(self, spec: FormField, value: Any) -> None:
        super().__init__()
        low = int(spec.minimum) if spec.minimum is not None else -_INT_LIMIT
        high = int(spec.maximum) if spec.maximum is not None else _INT_LIMIT
        low, high = max(low, -_INT_LIMIT), min(high, _INT_LIMIT)
        self._unset = low - 1
        self.setRange(self._unset, max(high, low))
        self.setSpecialValueText(translate("Elicitation", "Not set"))
        self.setAccelerated(True)
        self.setCorrectionMode(QAbstractSpinBox.CorrectionMode.CorrectToNearestValue)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.setValue(int(value) if isinstance(value, int | float) else self._unset)

    def entered(self) -> int | None:
        return None if self.value() == self._unset else self.value()


class _NumberBox(QDoubleSpinBox):
    """A number within the schema's bounds, shown without trailing zeros; one step below them reads
    "Not set"."""

    def __init__(self, spec: FormField, value: Any) -> None:
        super().__init__()
        self.setDecimals(6)
        low = float(spec.minimum) if spec.minimum is not None else -_NUMBER_LIMIT
        high = float(spec.maximum) if spec.maximum is not None else _NUMBER_LIMIT
        self._unset = low - 1.0
        self.setRange(self._unset, max(high, low))
        self.setSpecialValueText(translate("Elicitation", "Not set"))
        self.setStepType(QAbstractSpinBox.StepType.AdaptiveDecimalStepType)
        self.setCorrectionMode(QAbstractSpinBox.CorrectionMode.CorrectToNearestValue)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.setValue(float(value) if isinstance(value, int | float) else self._unset)

    def entered(self) -> float | None:
        return None if self.value() <= self._unset else self.value()

    def textFromValue(self, value: float) -> str:
        locale = self.locale()
        text = locale.toString(value, "f", self.decimals())
        if not self.isGroupSeparatorShown():
            text = text.replace(locale.groupSeparator(), "")
        point = locale.decimalPoint()
        if point in text:
            text = text.rstrip("0").rstrip(point)
        return text or "0"
