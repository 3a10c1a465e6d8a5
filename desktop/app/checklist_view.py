"""The session checklist beside the conversation: read-only, drawn from the conversation's
:class:`~desktop.conversation.checklist.ChecklistState` (live events or the stored history), hidden
while the agent has made none."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QLabel, QVBoxLayout, QWidget

from desktop.conversation.checklist import ChecklistState
from desktop.i18n import translate

__all__ = ["ChecklistView"]


class ChecklistView(QFrame):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("checklist")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setMinimumWidth(180)
        self.setMaximumWidth(320)
        self.heading = QLabel()
        self.heading.setObjectName("checklistHeading")
        self.nudge = QLabel(translate("Checklist", "Nothing has verified the work yet."))
        self.nudge.setObjectName("checklistNudge")
        self.nudge.setWordWrap(True)
        self._rows = QVBoxLayout()
        self._rows.setSpacing(4)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 8)
        layout.addWidget(self.heading)
        layout.addLayout(self._rows)
        layout.addWidget(self.nudge)
        layout.addStretch(1)
        self.labels: list[QLabel] = []
        self._state: ChecklistState | None = None
        self.refresh()

    def show_state(self, state: ChecklistState | None) -> None:
        if state is self._state:
            return
        if self._state is not None:
            self._state.unsubscribe(self.refresh)
        self._state = state
        if state is not None:
            state.subscribe(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        for label in self.labels:
            self._rows.removeWidget(label)
            label.deleteLater()
        self.labels = []
        state = self._state
        entries = state.entries if state is not None else []
        self.setVisible(bool(entries))
        if state is None or not entries:
            self.nudge.hide()
            return
        self.heading.setText(
            translate("Checklist", "Checklist — {done} of {total} done").format(
                done=state.done, total=len(entries)
            )
        )
        for entry in entries:
            suffix = translate("Checklist", "  (verification)") if entry.kind == "verification" else ""
            label = QLabel(f"{entry.glyph}  {entry.title}{suffix}")
            label.setWordWrap(True)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            label.setProperty("status", entry.status)
            if entry.status == "in_progress":
                font = label.font()
                font.setBold(True)
                label.setFont(font)
            self._rows.addWidget(label)
            self.labels.append(label)
        self.nudge.setVisible(state.verification_nudged)
