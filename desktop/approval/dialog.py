"""The Local Approval UI (seed 001 §1, §4.3; seed 000 §10.2–10.3): one non-modal window that shows the
oldest pending request of the :class:`ApprovalQueue` and answers it.

It shows what the user decides on — title, what would run, the risk level in colour and in words,
every detail the request carries (command and folder, file, URL, the diff a write would make), notes —
and how long the runtime keeps waiting; "N more waiting" when others queue behind it. The rest of the
app stays usable: the dialog is not modal, and it hides itself when the queue is empty.

Keyboard (the safe choice is the default one):

* **Enter denies.** Deny is the default button and has the focus when a request appears, so a
  keystroke meant for another window (Enter to send a prompt) can never approve anything; typing a
  reason and pressing Enter denies with that reason.
* **Esc denies**, and so does closing the window: it never approves, and a request is never left
  unanswered behind a hidden window while the agent waits for it.
* **Approving takes a deliberate act:** Tab to Approve and press Enter or Space, Alt+A, or
  Ctrl+Shift+Enter (⌘⇧↩ on macOS, where buttons get no Tab focus by default).
* When a new request appears, the buttons wait :data:`ARM_DELAY_MS` before they take input, so a key
  already on its way (or a double-click) meant for the previous request does not answer this one.

``decided(session_id, approval_id, decision, scope, reason)`` carries the wire values of
``ApproveActionParams``: decision ``approved``/``denied``, scope ``once``/``session`` (a denial is
always ``once``), reason ``""`` when none. The dialog removes the answered request from the queue.

"Always allow in this project" appears when the runtime suggests a rule for the request (only prompts
of the approval mode get one: never what the policy itself requires). It saves the rule through
``save_rules`` (the project's rules in the settings file, sent with every later task) and approves
this action for the rest of the conversation.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QFontDatabase, QKeySequence, QShortcut, QTextOption
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from desktop.approval.present import RequestView, describe, reveal_hidden
from desktop.approval.queue import ApprovalQueue, PendingApproval
from desktop.approval.request_dialog import ARM_DELAY_MS, RequestDialog, plain_label
from desktop.i18n import QT_TRANSLATE_NOOP, translate
from desktop.patch.highlight import DiffView

__all__ = ["ARM_DELAY_MS", "RISK_COLOURS", "ApprovalDialog"]

RISK_COLOURS = {
    "low": ("#2e7d32", "#ffffff"),
    "medium": ("#f9a825", "#000000"),
    "high": ("#c62828", "#ffffff"),
}
"""Badge background and text per risk. A solid badge with its own text colour reads the same on light
and dark windows (contrast 5.1:1, 10.6:1 and 5.6:1); the level is also written out, never colour only."""

_URGENT_S = 30.0
_CODE_LINES = 6
_JSON_LINES = 12


class ApprovalDialog(RequestDialog[PendingApproval]):
    """See the module docstring. ``clock`` is ``time.monotonic`` (the queue's clock); ``session_label``
    names a conversation for the user when several may ask at once."""

    decided = Signal(str, str, str, str, str)
    no_others_waiting = QT_TRANSLATE_NOOP("Approval", "No other approvals waiting")

    def __init__(
        self,
        queue: ApprovalQueue,
        parent: QWidget | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        arm_delay_ms: int = ARM_DELAY_MS,
        session_label: Callable[[str], str] | None = None,
        save_rules: Callable[[str, list[Any]], str] | None = None,
    ) -> None:
        """``save_rules(session_id, suggestedRules)`` saves the rules for the conversation's project and
        returns how they read; it raises ``ValueError`` with a message for the user when it cannot."""
        super().__init__(queue, parent, clock=clock, arm_delay_ms=arm_delay_ms, session_label=session_label)
        self._save_rules = save_rules
        self._details_rows: list[tuple[str, str]] = []
        self.setWindowTitle(translate("Approval", "Approval needed — Cowork"))
        self.resize(620, 480)
        self._build()
        self._follow_queue()

    # ------------------------------------------------------------------ what tests and D1 read

    def detail_rows(self) -> list[tuple[str, str]]:
        """The details shown, as (label, value) pairs in order."""
        return list(self._details_rows)

    # ------------------------------------------------------------------ layout

    def _build(self) -> None:
        self.risk_label = QLabel()
        self.risk_label.setObjectName("riskBadge")
        self.title_label = QLabel()
        self.title_label.setTextFormat(Qt.TextFormat.PlainText)
        self.title_label.setWordWrap(True)
        title_font = QFont(self.title_label.font())
        title_font.setBold(True)
        title_font.setPointSizeF(title_font.pointSizeF() * 1.2)
        self.title_label.setFont(title_font)
        header = QHBoxLayout()
        header.addWidget(self.risk_label, 0, Qt.AlignmentFlag.AlignTop)
        header.addWidget(self.title_label, 1)
        header.addWidget(self.countdown_label, 0, Qt.AlignmentFlag.AlignTop)

        self.session_label = QLabel()
        self.summary_label = plain_label(selectable=True)
        self.description_label = plain_label(selectable=True)
        description_font = QFont(self.description_label.font())
        description_font.setItalic(True)
        self.description_label.setFont(description_font)

        self._details = QWidget()
        self._details_form = QFormLayout(self._details)
        self._details_form.setContentsMargins(0, 0, 0, 0)
        self._details_form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.notes_label = plain_label(selectable=True)
        scroll_body = QWidget()
        body = QVBoxLayout(scroll_body)
        body.setContentsMargins(0, 0, 0, 0)
        body.addWidget(self.summary_label)
        body.addWidget(self.description_label)
        body.addWidget(self._details)
        body.addWidget(self.notes_label)
        body.addStretch(1)
        self._scroll = QScrollArea()
        self._scroll.setWidgetResizable(True)
        self._scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        self._scroll.setWidget(scroll_body)

        self.diff_caption = QLabel(translate("Approval", "Changes it would make:"))
        self.diff_view = DiffView()
        self.diff_view.setAccessibleName(translate("Approval", "Changes it would make"))

        self.scope_box = QCheckBox()
        self.scope_box.setToolTip(
            translate(
                "Approval",
                "Only this exact action is approved again without asking: a different command, file or "
                "domain still asks. Ends with this conversation.",
            )
        )
        self.reason_edit = QLineEdit()
        self.reason_edit.setPlaceholderText(
            translate("Approval", "Reason (optional): tell the agent why, or what to do instead")
        )
        self.reason_edit.setAccessibleName(translate("Approval", "Reason"))

        self.deny_button = QPushButton(translate("Approval", "&Deny"))
        self.deny_button.setDefault(True)
        self.deny_button.setToolTip(translate("Approval", "Deny (Enter, Esc)"))
        self.approve_button = QPushButton(translate("Approval", "&Approve"))
        self.approve_button.setAutoDefault(True)
        approve_keys = QKeySequence(Qt.Modifier.CTRL | Qt.Modifier.SHIFT | Qt.Key.Key_Return)
        self.approve_button.setToolTip(
            translate("Approval", "Approve ({keys})").format(
                keys=approve_keys.toString(QKeySequence.SequenceFormat.NativeText)
            )
        )
        self._approve_shortcut = QShortcut(approve_keys, self)
        self._approve_shortcut.activated.connect(lambda: self._decide("approved"))
        keypad_keys = QKeySequence(Qt.Modifier.CTRL | Qt.Modifier.SHIFT | Qt.Key.Key_Enter)
        QShortcut(keypad_keys, self).activated.connect(lambda: self._decide("approved"))
        self.deny_button.clicked.connect(lambda: self._decide("denied"))
        self.approve_button.clicked.connect(lambda: self._decide("approved"))
        self.project_button = QPushButton(translate("Approval", "Always allow in this &project"))
        self.project_button.setAutoDefault(False)
        self.project_button.clicked.connect(self._always_in_project)
        self.project_problem = QLabel()
        self.project_problem.setWordWrap(True)
        self.project_problem.hide()
        buttons = QHBoxLayout()
        buttons.addWidget(self.waiting_label)
        buttons.addStretch(1)
        buttons.addWidget(self.deny_button)
        buttons.addWidget(self.project_button)
        buttons.addWidget(self.approve_button)

        layout = QVBoxLayout(self)
        layout.addLayout(header)
        layout.addWidget(self.session_label)
        layout.addWidget(self._scroll, 2)
        layout.addWidget(self.diff_caption)
        layout.addWidget(self.diff_view, 3)
        layout.addWidget(self.scope_box)
        layout.addWidget(self.reason_edit)
        layout.addWidget(self.project_problem)
        layout.addLayout(buttons)

        # Deny first: the focus starts there, and Tab walks to Approve, then the options.
        QWidget.setTabOrder(self.deny_button, self.approve_button)
        QWidget.setTabOrder(self.approve_button, self.scope_box)
        QWidget.setTabOrder(self.scope_box, self.reason_edit)
        QWidget.setTabOrder(self.reason_edit, self.diff_view)

    # ------------------------------------------------------------------ following the queue

    def _show_request(self, pending: PendingApproval) -> None:
        view = describe(pending.request)
        background, foreground = RISK_COLOURS[view.risk]
        self.risk_label.setText(view.risk_label)
        self.risk_label.setAccessibleName(view.risk_label)
        self.risk_label.setStyleSheet(
            f"QLabel#riskBadge {{ background-color: {background}; color: {foreground};"
            " border-radius: 4px; padding: 2px 8px; font-weight: bold; }"
        )
        self.title_label.setText(view.title)
        self.summary_label.setText(view.summary)
        self.description_label.setText(view.description)
        self.description_label.setVisible(bool(view.description))
        conversation = self._session_label(pending.session_id) if self._session_label else ""
        self.session_label.setText(
            translate("Approval", "Conversation: {name}").format(name=conversation) if conversation else ""
        )
        self.session_label.setVisible(bool(conversation))
        self._fill_details(view)
        self.notes_label.setText("\n".join(f"⚠ {note}" for note in view.notes))
        self.notes_label.setVisible(bool(view.notes))
        self.diff_view.set_diff(view.diff)
        self.diff_view.setVisible(bool(view.diff))
        self.diff_caption.setVisible(bool(view.diff))
        self.scope_box.setText(view.scope_label)
        self.scope_box.setChecked(False)
        self.scope_box.setVisible(bool(view.scope_label))
        suggested = self._suggested(pending)
        self.project_button.setVisible(bool(suggested))
        self.project_button.setToolTip(
            translate(
                "Approval",
                "Saves {rules} for this project: later tasks are not asked for what it covers (never for"
                " what the policy itself asks about). Listed and removable in Settings.",
            ).format(rules=", ".join(_rule_text(rule) for rule in suggested))
            if suggested
            else ""
        )
        self.project_problem.hide()
        self.reason_edit.clear()
        self.setWindowTitle(
            translate("Approval", "Approval needed: {title} — Cowork").format(title=view.title)
        )
        self._scroll.verticalScrollBar().setValue(0)
        self.deny_button.setFocus(Qt.FocusReason.OtherFocusReason)

    def _fill_details(self, view: RequestView) -> None:
        while self._details_form.rowCount():
            self._details_form.removeRow(0)
        self._details_rows = [(row.label, row.value) for row in view.rows]
        for row in view.rows:
            field: QWidget = (
                _code_field(row.value, _JSON_LINES if row.kind == "json" else _CODE_LINES)
                if row.kind in ("code", "json")
                else plain_label(row.value, True)
            )
            field.setAccessibleName(row.label)
            self._details_form.addRow(f"{row.label}:", field)
        self._details.setVisible(bool(view.rows))

    def _update_countdown(self, pending: PendingApproval) -> float:
        left = super()._update_countdown(pending)
        font = QFont(self.countdown_label.font())
        font.setBold(left <= _URGENT_S)
        self.countdown_label.setFont(font)
        return left

    def _arm_buttons(self, armed: bool) -> None:
        # Deny keeps the focus and stays enabled (so the focus never jumps elsewhere), but nothing
        # answers until armed; Approve is greyed meanwhile.
        self.approve_button.setEnabled(armed)
        self.project_button.setEnabled(armed)

    # ------------------------------------------------------------------ answering

    def _decide(self, decision: str) -> None:
        pending = self._shown
        if not self._armed or pending is None or self._queue.get(pending.approval_id) is None:
            return
        approved = decision == "approved"
        session_wide = self.scope_box.isChecked() and not self.scope_box.isHidden()
        scope = "session" if approved and session_wide else "once"
        reason = self.reason_edit.text().strip()
        self._queue.discard(pending.approval_id)
        self.decided.emit(pending.session_id, pending.approval_id, decision, scope, reason)

    def _suggested(self, pending: PendingApproval) -> list[Any]:
        rules = pending.request.get("suggestedRules")
        if self._save_rules is None or not isinstance(rules, list):
            return []
        return [rule for rule in rules if isinstance(rule, dict)]

    def _always_in_project(self) -> None:
        pending = self._shown
        if not self._armed or pending is None or self._queue.get(pending.approval_id) is None:
            return
        suggested = self._suggested(pending)
        if not suggested or self._save_rules is None:
            return
        try:
            saved = self._save_rules(pending.session_id, suggested)
        except ValueError as exc:
            self.project_problem.setText(
                translate("Approval", "The rule was not saved: {problem}").format(problem=exc)
            )
            self.project_problem.show()
            return
        reason = self.reason_edit.text().strip() or f"Always allowed in this project: {saved}"
        self._queue.discard(pending.approval_id)
        # Later tasks send the rule; for the rest of this one the same action is a session approval.
        self.decided.emit(pending.session_id, pending.approval_id, "approved", "session", reason)

    def reject(self) -> None:
        """Esc: deny the request shown (never approve; never leave it unanswered out of sight)."""
        self._decide("denied")


def _rule_text(rule: dict[str, Any]) -> str:
    return reveal_hidden(f"{rule.get('kind')} {rule.get('pattern')}")


def _code_field(text: str, most_lines: int = _CODE_LINES) -> QPlainTextEdit:
    """A command, path, URL or arguments: monospace, whole (wrapped anywhere, scrolled past
    ``most_lines``)."""
    field = QPlainTextEdit(text)
    field.setReadOnly(True)
    field.setTabChangesFocus(True)
    field.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    field.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
    field.setTextInteractionFlags(
        Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
    )
    lines = min(max(1, text.count("\n") + 1), most_lines)
    margins = field.contentsMargins()
    document_margin = 2 * field.document().documentMargin()
    height = lines * field.fontMetrics().lineSpacing() + margins.top() + margins.bottom() + document_margin
    field.setFixedHeight(int(height) + 2)
    return field
